import { gql } from "./client";
import { DELIVERY_FIELDS, JOB_FIELDS } from "./jobs";
import type { Delivery, Job, LogEntry, Trigger, TriggerSummary } from "./types";

const TRIGGER_FIELDS = `id agentId description active secretRequired webhookUrl secret callbackUrl callbackSecret createdAt agent { id name }`;

export const triggersApi = {
  triggers: () => gql<{ triggers: TriggerSummary[] }>(`{ triggers { id agentId description active webhookUrl createdAt agent { id name } } }`).then((d) => d.triggers),
  trigger: (id: string, logs = 20) =>
    gql<{ trigger: Trigger | null }>(
      `query($id: ID!, $n: Int) { trigger(id: $id) { ${TRIGGER_FIELDS} logs(first: $n) { jobId time status durationMs threadId error } } }`,
      { id, n: logs },
    ).then((d) => d.trigger),
  triggerLogs: (id: string, logs = 20) =>
    gql<{ trigger: { logs: LogEntry[] } | null }>(`query($id: ID!, $n: Int) { trigger(id: $id) { logs(first: $n) { jobId time status durationMs threadId error } } }`, {
      id,
      n: logs,
    }).then((d) => d.trigger?.logs ?? []),
  createTrigger: (agentId: string, description: string | null) =>
    gql<{ createTrigger: { trigger: Trigger; secret: string; webhookUrl: string; testCommand: string; signedTestCommand: string } }>(
      `mutation($a: ID!, $d: String) { createTrigger(agentId: $a, description: $d) { trigger { ${TRIGGER_FIELDS} logs { jobId } } secret webhookUrl testCommand signedTestCommand } }`,
      { a: agentId, d: description },
    ).then((d) => d.createTrigger),
  updateTrigger: (id: string, description: string | null) =>
    gql<{ updateTrigger: { id: string; description: string | null } }>(`mutation($id: ID!, $d: String) { updateTrigger(id: $id, description: $d) { id description } }`, {
      id,
      d: description,
    }).then((d) => d.updateTrigger),
  setTriggerActive: (id: string, active: boolean) =>
    gql<{ setTriggerActive: { id: string; active: boolean } }>(`mutation($id: ID!, $a: Boolean!) { setTriggerActive(id: $id, active: $a) { id active } }`, { id, a: active }).then(
      (d) => d.setTriggerActive,
    ),
  setSecretRequired: (id: string, required: boolean) =>
    gql<{ updateTrigger: { id: string; secretRequired: boolean } }>(`mutation($id: ID!, $r: Boolean) { updateTrigger(id: $id, secretRequired: $r) { id secretRequired } }`, {
      id,
      r: required,
    }).then((d) => d.updateTrigger),
  setTriggerSecret: (id: string, secret: string) =>
    gql<{ setTriggerSecret: { id: string; secret: string } }>(`mutation($id: ID!, $s: String!) { setTriggerSecret(id: $id, secret: $s) { id secret } }`, { id, s: secret }).then(
      (d) => d.setTriggerSecret,
    ),
  rotateTriggerSecret: (id: string) =>
    gql<{ rotateTriggerSecret: { secret: string; previousSecretExpiresAt: string } }>(
      `mutation($id: ID!) { rotateTriggerSecret(id: $id) { secret previousSecretExpiresAt } }`,
      { id },
    ).then((d) => d.rotateTriggerSecret),
  revokePreviousTriggerSecrets: (id: string) =>
    gql<{ revokePreviousTriggerSecrets: { id: string } }>(`mutation($id: ID!) { revokePreviousTriggerSecrets(id: $id) { id } }`, { id }).then(
      (d) => d.revokePreviousTriggerSecrets,
    ),
  setCallbackUrl: (id: string, url: string | null) =>
    gql<{ updateTrigger: { id: string; callbackUrl: string | null; callbackSecret: string | null } }>(
      `mutation($id: ID!, $u: String) { updateTrigger(id: $id, callbackUrl: $u) { id callbackUrl callbackSecret } }`,
      { id, u: url },
    ).then((d) => d.updateTrigger),
  rotateCallbackSecret: (id: string) =>
    gql<{ rotateCallbackSecret: { secret: string; previousSecretExpiresAt: string } }>(
      `mutation($id: ID!) { rotateCallbackSecret(id: $id) { secret previousSecretExpiresAt } }`,
      { id },
    ).then((d) => d.rotateCallbackSecret),
  sendTestCallback: (triggerId: string) =>
    gql<{ sendTestCallback: { webhookId: string; attempts: Delivery[] } }>(
      `mutation($t: ID!) { sendTestCallback(triggerId: $t) { webhookId attempts { ${DELIVERY_FIELDS} } } }`,
      { t: triggerId },
    ).then((d) => d.sendTestCallback),
  sendTestWebhook: (triggerId: string, payload: unknown) =>
    gql<{ sendTestWebhook: Job }>(`mutation($t: ID!, $p: JSON!) { sendTestWebhook(triggerId: $t, payload: $p) { ${JOB_FIELDS} } }`, { t: triggerId, p: payload }).then(
      (d) => d.sendTestWebhook,
    ),
};
