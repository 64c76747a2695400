import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";
import { Agent } from "./agents.js";
import { Thread } from "./threads.js";

/** What the chat API keeps besides threads: stored responses and per-key rate-limit windows (src/chat). */

/** A stored Responses API response (GET /api/v1/responses/{id}, previous_response_id → its thread). */
export const StoredResponse = defineEntity({
  name: "StoredResponse",
  tableName: "responses",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    agent: () => p.manyToOne(Agent).deleteRule("cascade"),
    thread: () => p.manyToOne(Thread).deleteRule("cascade"),
    body: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
});
export type IStoredResponse = InferEntity<typeof StoredResponse>;

/**
 * Per-key requests-per-minute windows of the chat API (src/chat/rate-limit.ts): row `key:<keyId>`
 * counts `points` in the window that ends at `expire` (epoch ms). Updated by one upsert per request.
 */
export const RateLimitWindow = defineEntity({
  name: "RateLimitWindow",
  tableName: "chat_rate_limits",
  properties: {
    key: p.string().length(255).primary(),
    points: p.integer().default(0),
    expire: p.bigint("number").nullable(),
  },
});
export type IRateLimitWindow = InferEntity<typeof RateLimitWindow>;
