import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";
import { agentOwned } from "./agent-owned.js";
import { Agent } from "./agents.js";
import { Thread } from "./threads.js";

/** A2A tasks, their push notification configs and client-chosen contexts (src/a2a). */

/**
 * An A2A task (docs/design/a2a.md). A chat agent's task is a chat turn: its state, answer and error live
 * here. An automation agent's task is a job (same id): its state and result are the job's, this
 * row keeps what A2A needs besides (context, the request message).
 */
export const A2aTask = defineEntity({
  name: "A2aTask",
  tableName: "a2a_tasks",
  properties: {
    ...agentOwned(),
    // A column, not a constraint: the task goes with its agent, and so with the account (agents
    // cascade from accounts). Every task's insert checks one key fewer and writes one index entry
    // fewer; reads always name the agent too.
    account: () => p.manyToOne(Account).createForeignKeyConstraint(false),
    // Not a constraint either: its key check locks the agent's row (a WAL record) in every
    // task's insert, a blocking send's finish statement among them. The agent's delete trigger
    // (agents.ts) deletes its tasks. A turn's open and finish write a task only while they hold
    // the turn's thread, whose row goes with the agent before that trigger runs; every other
    // write locks the agent's row (chat-task-store.ts `agentKept`) or its job's (store.ts
    // `insertJobTask`), as the key did. So no task outlives its agent. No index of its own:
    // a2a_tasks_agent_updated_idx leads with it.
    agent: () => p.manyToOne(Agent).createForeignKeyConstraint(false),
    contextId: p.string().length(255),
    /** `chat` (a turn on thread `contextId`) or `job` (the job with this id). */
    kind: p.string().length(10),
    /**
     * submitted | working | completed | failed | canceled. Job tasks: the job's, written by the
     * task's insert and by each job status transition (outbound/store.ts `jobTaskCte`), for
     * ListTasks' filter; reads take it from the job. Null only in rows older than that.
     */
    state: p.string().length(20).nullable(),
    /** The user's message as sent (A2A JSON), the task's history with the answer. */
    request: p.json<Record<string, unknown>>(),
    answer: p.text().nullable(),
    error: p.text().nullable(),
    /** Chat tasks: someone waits for the end through NOTIFY (SubscribeToTask, CancelTask); the end is NOTIFYed only then. */
    followed: p.boolean().default(false),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    /** The task's status time, ListTasks' order: a chat task's start or end; a job task's latest transition. */
    updatedAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  // ListTasks pages by this index in keyset order (newest status first). It takes updated_at, so
  // the end of a chat task written before it (a non-blocking send, an early stream id) writes an
  // index entry; a blocking send's task is inserted already ended and writes none.
  indexes: [{ name: "a2a_tasks_agent_updated_idx", properties: ["agent", "updatedAt", "id"] }],
});
export type IA2aTask = InferEntity<typeof A2aTask>;

/**
 * A push notification config given with an A2A message (`configuration.taskPushNotificationConfig`):
 * stored for the outbound delivery engine (docs/guides/webhooks.md), not delivered yet.
 */
export const A2aPushConfig = defineEntity({
  name: "A2aPushConfig",
  tableName: "a2a_push_configs",
  properties: {
    id: p.string().primary(),
    task: () => p.manyToOne(A2aTask).deleteRule("cascade").index(),
    /** The id the client chose for it (A2A `id`), unique per task; null: the config's own id is shown. */
    clientId: p.string().length(255).nullable(),
    url: p.text(),
    token: p.text().nullable(),
    authentication: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  uniques: [{ name: "a2a_push_configs_task_client_id_unique", properties: ["task", "clientId"] }],
});
export type IA2aPushConfig = InferEntity<typeof A2aPushConfig>;

/**
 * A context id an A2A client chose for a chat agent (one that is not a thread id of the agent):
 * the thread its first message started, which later messages with it continue. Scoped by
 * agent (and so by account): the same id of another agent or account is another thread.
 */
export const A2aContext = defineEntity({
  name: "A2aContext",
  tableName: "a2a_contexts",
  properties: {
    agent: () => p.manyToOne(Agent).deleteRule("cascade").primary(),
    contextId: p.string().length(255).primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    thread: () => p.manyToOne(Thread).deleteRule("cascade").unique(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  primaryKeys: ["agent", "contextId"],
});
export type IA2aContext = InferEntity<typeof A2aContext>;
