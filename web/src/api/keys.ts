import { gql } from "./client";
import type { ApiKey, KeyControlsInput } from "./types";

const FIELDS = "id name prefix last4 expiresAt spendLimit spendLimitPeriod spent lastUsedAt createdAt";

export const keysApi = {
  createApiKey: (agentId: string, name: string, c: KeyControlsInput) =>
    gql<{ createApiKey: { key: string; apiKey: ApiKey } }>(
      `mutation($a: ID!, $n: String!, $e: DateTimeISO, $l: String, $p: SpendLimitPeriod) {
         createApiKey(agentId: $a, name: $n, expiresAt: $e, spendLimit: $l, spendLimitPeriod: $p) { key apiKey { ${FIELDS} } } }`,
      { a: agentId, n: name, e: c.expiresAt, l: c.spendLimit, p: c.spendLimitPeriod },
    ).then((d) => d.createApiKey),
  updateApiKeyControls: (id: string, c: KeyControlsInput) =>
    gql<{ updateApiKey: ApiKey }>(
      `mutation($id: ID!, $e: DateTimeISO, $l: String, $p: SpendLimitPeriod) { updateApiKey(id: $id, expiresAt: $e, spendLimit: $l, spendLimitPeriod: $p) { ${FIELDS} } }`,
      { id, e: c.expiresAt, l: c.spendLimit, p: c.spendLimitPeriod },
    ).then((d) => d.updateApiKey),
  deleteApiKey: (id: string) => gql<{ deleteApiKey: boolean }>(`mutation($id: ID!) { deleteApiKey(id: $id) }`, { id }),
};
