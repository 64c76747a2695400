import { gql } from "./client";
import type { Agent } from "./types";

const AGENT_FIELDS = `id name instructions defaultModel allowedModels fallbackModels kind script a2aCardUrl mcpUrl createdAt updatedAt
  apiKeys { id name prefix last4 expiresAt spendLimit spendLimitPeriod spent lastUsedAt createdAt kind clientName clientId }
  triggers { id agentId description active webhookUrl createdAt }`;

export const agentsApi = {
  agents: () => gql<{ agents: Agent[] }>(`{ agents { ${AGENT_FIELDS} } }`).then((d) => d.agents),
  agent: (id: string) => gql<{ agent: Agent | null }>(`query($id: ID!) { agent(id: $id) { ${AGENT_FIELDS} } }`, { id }).then((d) => d.agent),
  createAgent: (input: Record<string, unknown>) =>
    gql<{ createAgent: Agent }>(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { ${AGENT_FIELDS} } }`, { i: input }).then((d) => d.createAgent),
  updateAgent: (id: string, input: Record<string, unknown>) =>
    gql<{ updateAgent: Agent }>(`mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { ${AGENT_FIELDS} } }`, { id, i: input }).then(
      (d) => d.updateAgent,
    ),
  deleteAgent: (id: string) => gql<{ deleteAgent: boolean }>(`mutation($id: ID!) { deleteAgent(id: $id) }`, { id }),
};
