import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";

/** Agents and their script secrets. */

export const Agent = defineEntity({
  name: "Agent",
  tableName: "agents",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    name: p.string().length(200),
    instructions: p.text().default(""),
    defaultModel: p.string().length(100),
    allowedModels: p.json<string[]>().nullable(),
    /** Models tried in order when the chosen one's upstream fails before answering (docs/guides/chat.md). */
    fallbackModels: p.json<string[]>().nullable(),
    script: p.text().nullable(),
    /** Host patterns `ctx.fetch` may reach (`api.example.com`, `*.example.com`); empty: none. */
    egressAllow: p.json<string[]>().nullable(),
    /** Per-agent run limits; null means the operator's default (always capped by its maximum). */
    cpuTimeLimitMs: p.integer().nullable(),
    wallTimeLimitMs: p.integer().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  indexes: [{ properties: ["account", "createdAt"] }],
  // An A2A task keeps its agent as a column, not a constraint (a2a.ts): its rows go with the
  // agent here, whatever deletes it (deleteAgent, an operator's delete of the account).
  triggers: [{ name: "delete_a2a_tasks", timing: "after", events: ["delete"], forEach: "row", body: "delete from a2a_tasks where agent_id = old.id; return null;" }],
});
export type IAgent = InferEntity<typeof Agent>;

/** `ctx.secrets.NAME` of an automation agent: sealed like trigger secrets, never returned by any API. */
export const AgentSecret = defineEntity({
  name: "AgentSecret",
  tableName: "agent_secrets",
  properties: {
    agent: () => p.manyToOne(Agent).deleteRule("cascade").primary(),
    name: p.string().length(100).primary(),
    sealedValue: p.text(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  primaryKeys: ["agent", "name"],
});
export type IAgentSecret = InferEntity<typeof AgentSecret>;
