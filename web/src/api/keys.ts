import { gql } from "./client";
import type { ApiKey } from "./types";

export const keysApi = {
  createApiKey: (agentId: string, name: string) =>
    gql<{ createApiKey: { key: string; apiKey: ApiKey } }>(
      `mutation($a: ID!, $n: String!) { createApiKey(agentId: $a, name: $n) { key apiKey { id name prefix last4 lastUsedAt createdAt } } }`,
      { a: agentId, n: name },
    ).then((d) => d.createApiKey),
  deleteApiKey: (id: string) => gql<{ deleteApiKey: boolean }>(`mutation($id: ID!) { deleteApiKey(id: $id) }`, { id }),
};
