import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import type { ChatMessage } from "../providers/types.js";
import { releaseCte, type CallTags } from "../billing/ledger.js";
import { sqlNames } from "../db/names.js";
import { Message, Thread } from "../db/schema.js";
import { statement, type Param } from "../db/statement.js";

/**
 * Thread persistence for the chat hot path, in hand-written SQL (one round trip per step).
 * A turn holds the thread's `busy_until` lease from start to save; a second turn meanwhile gets
 * 409, and a lease left by a crashed instance simply expires.
 */
const T = sqlNames(Thread);
const M = sqlNames(Message);

/**
 * The `new_thread` CTE: inserts thread `threadId` (leased for `leaseMs`) for each row of `from`
 * (one row, or none when the turn was refused). Parameters: threadId, accountId, agentId, leaseMs.
 */
export function newThreadCte(p: Param, from: string): string {
  return `new_thread as (insert into ${T.table} (${T.id}, ${T.account}, ${T.agent}, ${T.busyUntil}, ${T.messageCount}, ${T.createdAt}, ${T.updatedAt})
                select ${p("threadId")}, ${p("accountId")}, ${p("agentId")}, now() + make_interval(secs => ${p("leaseMs")}::double precision / 1000), 0, now(), now()
                  from ${from})`;
}

const LEASE = statement(
  "thread-lease",
  (p) => `with l as (update ${T.table} set ${T.busyUntil} = now() + make_interval(secs => ${p("leaseMs")}::double precision / 1000)
                 where ${T.id} = ${p("threadId")} and ${T.account} = ${p("accountId")} and ${T.agent} = ${p("agentId")}
                   and (${T.busyUntil} is null or ${T.busyUntil} < now())
                 returning ${T.id}, ${T.messageCount})
     select l.${T.messageCount} as message_count, m.${M.role} as role, m.${M.content} as content, m.${M.data} as data
       from l left join ${M.table} m on m.${M.thread} = l.${T.id} order by m.${M.seq}`,
);
const EXISTS = statement("thread-exists", (p) => `select 1 from ${T.table} where ${T.id} = ${p("threadId")} and ${T.account} = ${p("accountId")} and ${T.agent} = ${p("agentId")}`);
const RENEW = statement(
  "thread-renew-lease",
  (p) => `update ${T.table} set ${T.busyUntil} = now() + make_interval(secs => ${p("leaseMs")}::double precision / 1000) where ${T.id} = ${p("threadId")} and ${T.busyUntil} is not null`,
);
const UNLEASE = statement("thread-unlease", (p) => `update ${T.table} set ${T.busyUntil} = null where ${T.id} = ${p("threadId")}`);

/** Takes the lease on an existing thread of this agent and reads its history, in one round trip. */
export async function leaseThread(
  pool: pg.Pool,
  a: { threadId: string; accountId: string; agentId: string; leaseMs: number },
): Promise<{ messageCount: number; history: ChatMessage[] }> {
  const { rows } = await pool.query<{ message_count: number; role: string | null; content: string | null; data: MessageData | null }>(LEASE.with(a));
  if (rows.length === 0) {
    const exists = await pool.query(EXISTS.with(a));
    if (exists.rowCount) throw new AppError("thread_busy", "Another turn on this thread is still in progress; retry when it has finished", { param: "thread_id" });
    throw new AppError("thread_not_found", `Thread ${a.threadId} not found`, { param: "thread_id" });
  }
  const history: ChatMessage[] = [];
  for (const r of rows) if (r.role !== null) history.push({ role: r.role as ChatMessage["role"], content: r.content ?? "", ...r.data });
  return { messageCount: rows[0]!.message_count, history };
}

/** What a message has beyond role and text (tool calls, the call a tool result answers, image parts), kept as JSON. */
type MessageData = Pick<ChatMessage, "parts" | "toolCalls" | "toolCallId">;

function messageData(m: ChatMessage): string | null {
  if (!m.parts && !m.toolCalls?.length && !m.toolCallId) return null;
  const data: MessageData = {};
  if (m.parts) data.parts = m.parts;
  if (m.toolCalls?.length) data.toolCalls = m.toolCalls;
  if (m.toolCallId) data.toolCallId = m.toolCallId;
  return JSON.stringify(data);
}

const UNLEASE_IF_HELD = statement(
  "thread-unlease-if-held",
  (p) => `update ${T.table} set ${T.busyUntil} = null where ${T.id} = ${p("threadId")} and ${T.busyUntil} is not null returning ${T.id}`,
);

/**
 * Frees a lease that a dead process left behind (a run's turn cut by a worker crash); true when
 * the thread was still leased, i.e. the turn never finished.
 */
export async function releaseLeftLease(pool: pg.Pool, threadId: string): Promise<boolean> {
  return ((await pool.query(UNLEASE_IF_HELD.with({ threadId }))).rowCount ?? 0) > 0;
}

/** Extends a held lease: a turn whose answer streams longer than the lease keeps its thread. */
export async function renewLease(pool: pg.Pool, threadId: string, leaseMs: number): Promise<void> {
  await pool.query(RENEW.with({ threadId, leaseMs }));
}

/** Gives the lease back without saving anything (the turn was refused after the lease). */
export async function releaseLease(pool: pg.Pool, threadId: string): Promise<void> {
  await pool.query(UNLEASE.with({ threadId }));
}

const FINISH = statement(
  "thread-finish-turn",
  (p) => `with ${releaseCte(p)},
          m as (insert into ${M.table} (${M.thread}, ${M.seq}, ${M.role}, ${M.content}, ${M.data}, ${M.createdAt})
                select ${p("threadId")}, ${p("baseSeq")}::int + x.ord::int, x.role, x.content, x.data::jsonb, now()
                  from unnest(${p("roles")}::text[], ${p("contents")}::text[], ${p("data")}::text[]) with ordinality as x(role, content, data, ord)
                 where exists (select 1 from held))
     update ${T.table} set ${T.busyUntil} = null, ${T.messageCount} = ${T.messageCount} + case when exists (select 1 from held) then ${p("count")}::int else 0 end, ${T.updatedAt} = now()
      where ${T.id} = ${p("threadId")} returning exists (select 1 from held) as settled`,
);

/**
 * Ends a turn: appends the messages (in order, after `baseSeq`), releases the lease and credits
 * back `release` micro-USD of the hold, all in one statement so a crash cannot keep one without
 * the other. A synchronous commit: it also makes the turn's asynchronously committed hold (and
 * new thread) durable before the answer leaves (WAL is flushed in order). When the hold is not
 * there (lost to a database crash since it was placed, or already released) nothing is saved or
 * credited, the lease is still released (a continuation's lease is durable, its hold may not be),
 * and the turn fails with service_unavailable: the client must not get an answer whose thread is
 * not stored.
 */
export async function finishTurn(
  pool: pg.Pool,
  a: { threadId: string; accountId: string; baseSeq: number; messages: ChatMessage[]; release: number; reference: string; tags: CallTags; inputTokens: number; outputTokens: number },
): Promise<void> {
  const { rows } = await pool.query<{ settled: boolean }>(
    FINISH.with({
      ...a.tags,
      inputTokens: a.inputTokens,
      outputTokens: a.outputTokens,
      accountId: a.accountId,
      release: a.release,
      reference: a.reference,
      threadId: a.threadId,
      baseSeq: a.baseSeq,
      roles: a.messages.map((m) => m.role),
      contents: a.messages.map((m) => m.content),
      count: a.messages.length,
      data: a.messages.map(messageData),
    }),
  );
  if (!rows[0]?.settled) {
    throw new AppError("service_unavailable", "The database restarted during this request and lost its hold; nothing was charged, retry the request", { headers: { "Retry-After": "1" } });
  }
}
