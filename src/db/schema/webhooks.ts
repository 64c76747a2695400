import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Agent } from "./agents.js";
import { JOB_SOURCES, Job } from "./jobs.js";
import { Trigger } from "./triggers.js";

/** Idempotency records of job ingest (src/webhooks): a trigger's, and an agent's for runs started without one. */

export const IdempotencyRecord = defineEntity({
  name: "IdempotencyRecord",
  tableName: "idempotency_records",
  properties: {
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade").primary(),
    key: p.string().length(255).primary(),
    job: () => p.manyToOne(Job).deleteRule("cascade"),
    expiresAt: p.datetime().index(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  primaryKeys: ["trigger", "key"],
});
export type IIdempotencyRecord = InferEntity<typeof IdempotencyRecord>;

/**
 * Idempotency of jobs started without a trigger (A2A `messageId`, MCP): scoped per agent and
 * source, kept 24 hours like a webhook's record.
 */
export const AgentIdempotencyRecord = defineEntity({
  name: "AgentIdempotencyRecord",
  tableName: "agent_idempotency_records",
  properties: {
    agent: () => p.manyToOne(Agent).deleteRule("cascade").primary(),
    source: p.enum(JOB_SOURCES).primary(),
    key: p.string().length(255).primary(),
    job: () => p.manyToOne(Job).deleteRule("cascade"),
    expiresAt: p.datetime().index(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  primaryKeys: ["agent", "source", "key"],
});
export type IAgentIdempotencyRecord = InferEntity<typeof AgentIdempotencyRecord>;
