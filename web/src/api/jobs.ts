import { gql } from "./client";
import type { Delivery, InputRequest, Job, JobAudit, JobFilter, JobSummary, Page } from "./types";

export const DELIVERY_FIELDS = `deliveryId webhookId attempt at url statusCode durationMs error responseBytes deliveryStatus`;

export const JOB_FIELDS = `id status triggerId agentId threadId result error attempts cost logs createdAt startedAt finishedAt inputRequest { id prompt schema expiresAt }`;
const SUMMARY = `id status triggerId agentId threadId error attempts cost createdAt startedAt finishedAt replayOf { id }`;

export const jobsApi = {
  job: (id: string) => gql<{ job: Job | null }>(`query($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`, { id }).then((d) => d.job),
  jobs: (filter: JobFilter, first: number, after: string | null) =>
    gql<{ jobs: Page<JobSummary> }>(
      `query($f: JobFilter, $n: Int, $a: String) { jobs(filter: $f, first: $n, after: $a) { edges { cursor node { ${SUMMARY} } } pageInfo { hasNextPage endCursor } } }`,
      { f: filter, n: first, a: after },
    ).then((d) => d.jobs),
  jobAudit: (id: string) =>
    gql<{ job: (JobSummary & { result: unknown; logs: string[]; inputRequest: InputRequest | null; audit: JobAudit | null }) | null }>(
      `query($id: ID!) { job(id: $id) { ${SUMMARY} result logs inputRequest { id prompt schema expiresAt } audit { payload payloadPurgedAt result cost toolsUsed { kind name status durationMs cost } } } }`,
      { id },
    ).then((d) => d.job),
  cancelJob: (id: string) => gql<{ cancelJob: JobSummary }>(`mutation($id: ID!) { cancelJob(id: $id) { ${SUMMARY} } }`, { id }).then((d) => d.cancelJob),
  /** The value must match the question's schema; a mismatch is an error whose message names what failed. */
  answerJobInput: (jobId: string, value: unknown) =>
    gql<{ answerJobInput: Job }>(`mutation($j: ID!, $v: JSON!) { answerJobInput(jobId: $j, value: $v) { ${JOB_FIELDS} } }`, { j: jobId, v: value }).then((d) => d.answerJobInput),
  deliveries: (id: string) =>
    gql<{ job: { deliveries: Delivery[] } | null }>(`query($id: ID!) { job(id: $id) { deliveries { ${DELIVERY_FIELDS} } } }`, { id }).then((d) => d.job?.deliveries ?? []),
  redeliver: (id: string) => gql<{ redeliver: { id: string } }>(`mutation($id: ID!) { redeliver(jobId: $id) { id } }`, { id }).then((d) => d.redeliver),
  replayJob: (id: string) => gql<{ replayJob: JobSummary }>(`mutation($id: ID!) { replayJob(id: $id) { ${SUMMARY} } }`, { id }).then((d) => d.replayJob),
};
