import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { agentOwned } from "./agent-owned.js";

/** Conversations: threads and their messages (src/threads). */

export const Thread = defineEntity({
  name: "Thread",
  tableName: "threads",
  properties: {
    ...agentOwned(),
    /** Set while a turn is in flight; a stale lease (crashed instance) expires on its own. */
    busyUntil: p.datetime().nullable(),
    /** The turn (its ledger reference) that holds the lease: a reclaim or a late finish acts only on its own turn. */
    turnId: p.string().length(100).nullable(),
    messageCount: p.integer().default(0),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  indexes: [{ name: "threads_agent_created_idx", properties: ["agent", "createdAt", "id"] }],
});
export type IThread = InferEntity<typeof Thread>;

export const Message = defineEntity({
  name: "Message",
  tableName: "messages",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    thread: () => p.manyToOne(Thread).deleteRule("cascade"),
    seq: p.integer(),
    role: p.string().length(20),
    content: p.text(),
    /** Tool calls, the tool call a tool result answers, image parts (src/threads/store.ts MessageData). */
    data: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  uniques: [{ properties: ["thread", "seq"] }],
});
export type IMessage = InferEntity<typeof Message>;
