import type pg from "pg";
import { A2aContext } from "../db/schema.js";
import { sqlNames } from "../db/names.js";
import type { KeyPrincipal } from "../keys/auth.js";
import { checkClientId } from "./validation.js";

/**
 * Context ids A2A clients choose for a chat agent's conversations (table a2a_contexts). A chat
 * task's context is its thread: the gateway's own contextIds are thread ids (`thr_…`). Any other
 * contextId is the client's: its first message starts a new thread, recorded under (agent,
 * contextId), and later messages with it continue that thread. The mapping is scoped by agent and
 * account, so the same id of another agent or account is another conversation, and a `thr_…` id
 * is only ever a thread of this agent (another one's is refused as an unknown thread, as before).
 */

const C = sqlNames(A2aContext);

/** SQL: the A2A contextId of a chat task whose `context_id` (its thread) is `threadSql`. */
export const clientContextOf = (threadSql: string) => `coalesce((select c.${C.contextId} from ${C.table} c where c.${C.thread} = ${threadSql}), ${threadSql})`;

/** SQL: the thread of this agent's client contextId `$n` (for a filter by contextId; `agentParam` is `$k` of the agent id). */
export const threadOfClientContext = (agentParam: string, contextParam: string) => `(select c.${C.thread} from ${C.table} c where c.${C.agent} = ${agentParam} and c.${C.contextId} = ${contextParam})`;

export interface ChatContext {
  /** The thread the message continues; undefined: a new thread. */
  threadId?: string;
  /** The client's own contextId (not a thread id): what the task's contextId reads as. */
  clientContextId?: string;
}

/**
 * Where a chat agent's message goes when its contextId says it alone: none (a new thread) or a
 * thread id. Undefined for a client's own contextId (clientContext looks it up). Synchronous, so
 * the common message reaches its turn's open with no wait in between.
 */
export function ownContext(contextId: string): ChatContext | undefined {
  if (!contextId) return {};
  if (contextId.startsWith("thr_")) return { threadId: contextId };
  return undefined;
}

/** Where a message with the client's own contextId goes: the thread that context started, or a new one (validated: Invalid params). */
export async function clientContext(db: pg.Pool, principal: KeyPrincipal, contextId: string): Promise<ChatContext> {
  checkClientId(contextId, "message.contextId");
  const { rows } = await db.query<{ threadId: string }>(
    `select ${C.thread} as "threadId" from ${C.table} where ${C.agent} = $1 and ${C.account} = $2 and ${C.contextId} = $3`,
    [principal.agent.id, principal.agent.accountId, contextId],
  );
  return { threadId: rows[0]?.threadId, clientContextId: contextId };
}

/**
 * Records the thread a client's new context started. False when a concurrent first message of
 * the same context recorded its own thread first: this turn's thread then stays a thread of its
 * own (its task reads the thread id as its contextId).
 */
export async function recordClientContext(db: pg.Pool, principal: KeyPrincipal, contextId: string, threadId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into ${C.table} (${C.agent}, ${C.contextId}, ${C.account}, ${C.thread}, ${C.createdAt}) values ($1, $2, $3, $4, now()) on conflict do nothing`,
    [principal.agent.id, contextId, principal.agent.accountId, threadId],
  );
  return rowCount === 1;
}
