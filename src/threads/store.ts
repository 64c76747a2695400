import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import type { ChatMessage } from "../providers/types.js";
import { reclaimCte, settledCallCte } from "../billing/ledger.js";
import { sqlNames } from "../db/names.js";
import { Message, Thread } from "../db/schema.js";
import { statement, type Param, type Statement } from "../db/statement.js";

/**
 * Thread persistence for the chat hot path, in hand-written SQL (one round trip per step).
 * A turn holds the thread's `busy_until` lease from start to save, tagged with its id (`turn_id`,
 * also its hold's ledger reference); a second turn meanwhile gets 409. A lease left by a dead turn
 * (crashed instance, or a turn paused past its lease) expires, and the reclaim (`reclaimExpiredTurns`)
 * then frees it and hands its unsettled hold back (docs/design/billing-reservations.md). The turn's end
 * is finish.ts.
 */
const T = sqlNames(Thread);
const M = sqlNames(Message);

/**
 * The `new_thread` CTE: inserts thread `threadId` (leased for `leaseMs` by turn `reference`) for
 * each row of `from` (one row, or none when the turn was refused). Parameters: threadId,
 * accountId, agentId, leaseMs, reference.
 */
export function newThreadCte(p: Param, from: string): string {
  return `new_thread as (insert into ${T.table} (${T.id}, ${T.account}, ${T.agent}, ${T.busyUntil}, ${T.turnId}, ${T.messageCount}, ${T.createdAt}, ${T.updatedAt})
                select ${p("threadId")}, ${p("accountId")}, ${p("agentId")}, now() + make_interval(secs => ${p("leaseMs")}::double precision / 1000), ${p("reference")}, 0, now(), now()
                  from ${from})`;
}

/**
 * CTEs `lease` and `history`, for a continuation's open statement (chat/store.ts). `lease` takes
 * the lease on thread `threadId` of this account and agent for turn `turnId`, when it is free and
 * `condition` holds: one row (id, message_count), or none (busy, not found, or refused). A lease
 * still tagged with a turn is taken over only once the reclaim has settled that turn (see
 * `leaseRefused`). `history` is the leased thread's messages, each with what it adds to the
 * hold's prompt size: `bytes` (the UTF-8 length of its text as providers' `messageText` counts
 * it: content, then each tool call's name and arguments) and `images` (its image parts); the
 * jsonb is only walked when the message has tool calls or parts (most have neither: data is null).
 * Parameters: threadId, accountId, agentId, leaseMs, turnId.
 */
export function leaseCte(p: Param, condition?: string): string {
  const bytes = (sql: string) => `coalesce(octet_length(${sql}), 0)`;
  return `lease as (update ${T.table} set ${T.busyUntil} = now() + make_interval(secs => ${p("leaseMs")}::double precision / 1000), ${T.turnId} = ${p("turnId")}
                 where ${T.id} = ${p("threadId")} and ${T.account} = ${p("accountId")} and ${T.agent} = ${p("agentId")}
                   and ${T.turnId} is null and (${T.busyUntil} is null or ${T.busyUntil} < now())${condition ? ` and ${condition}` : ""}
                 returning ${T.id}, ${T.messageCount} as message_count),
          history as (select m.${M.seq} as seq, m.${M.role} as role, m.${M.content} as content, m.${M.data} as data,
                  ${bytes(`m.${M.content}`)} + case when m.${M.data} ? 'toolCalls' then coalesce((select sum(${bytes("c->>'name'")} + ${bytes("c->>'arguments'")}) from jsonb_array_elements(m.${M.data}->'toolCalls') c), 0) else 0 end as bytes,
                  case when m.${M.data} ? 'parts' then (select count(*) from jsonb_array_elements(m.${M.data}->'parts') x where x->>'type' = 'image') else 0 end as images
             from lease l join ${M.table} m on m.${M.thread} = l.${T.id})`;
}

/**
 * SQL (text[]): the ids of the tool calls the `history` CTE leaves open for a continuation's
 * leading tool results — those of its last message that is neither system nor tool, when that is
 * an assistant message; none otherwise (chat/request.ts `checkToolResults` on history + request).
 */
export const OPEN_TOOL_CALLS_SQL = `coalesce((select case when h.role = 'assistant' then array(select c->>'id' from jsonb_array_elements(h.data->'toolCalls') c) else '{}'::text[] end
                  from history h where h.role not in ('system', 'tool') order by h.seq desc limit 1), '{}'::text[])`;

/** The history a continuation's open statement returns (`[role, content, data]` per message, in order; null when there are none), as messages. */
export function historyFrom(rows: [string, string | null, MessageData | null][] | null): ChatMessage[] {
  const history: ChatMessage[] = [];
  for (const [role, content, data] of rows ?? []) history.push({ role: role as ChatMessage["role"], content: content ?? "", ...data });
  return history;
}

const EXISTS = statement(
  "thread-exists",
  (p) => `select ${T.busyUntil} < now() as expired from ${T.table} where ${T.id} = ${p("threadId")} and ${T.account} = ${p("accountId")} and ${T.agent} = ${p("agentId")}`,
);
const RENEW = statement(
  "thread-renew-lease",
  (p) => `update ${T.table} set ${T.busyUntil} = now() + make_interval(secs => ${p("leaseMs")}::double precision / 1000) where ${T.id} = ${p("threadId")} and ${T.turnId} = ${p("turnId")}`,
);
const UNLEASE = statement("thread-unlease", (p) => `update ${T.table} set ${T.busyUntil} = null, ${T.turnId} = null where ${T.id} = ${p("threadId")} and ${T.turnId} = ${p("turnId")}`);

/**
 * Why `lease` took nothing: throws thread_not_found when this agent has no such thread; when its
 * lease expired with a dead turn, reclaims that turn (threads then free) and returns, so the
 * caller takes the lease once more (and answers thread_busy if that fails too); else thread_busy.
 */
export async function leaseRefused(pool: pg.Pool, a: { threadId: string; accountId: string; agentId: string }, reclaim?: ReclaimStatements): Promise<void> {
  const exists = await pool.query<{ expired: boolean | null }>(EXISTS.with(a));
  if (!exists.rowCount) throw new AppError("thread_not_found", `Thread ${a.threadId} not found`, { param: "thread_id" });
  if (exists.rows[0]!.expired && (await reclaimExpiredTurns(pool, { threadId: a.threadId }, reclaim)).turns > 0) return;
  throw threadBusy();
}

export function threadBusy(): AppError {
  return new AppError("thread_busy", "Another turn on this thread is still in progress; retry when it has finished", { param: "thread_id" });
}

/** What a message has beyond role and text (tool calls, the call a tool result answers, image parts), kept as JSON. */
export type MessageData = Pick<ChatMessage, "parts" | "toolCalls" | "toolCallId">;

export function messageData(m: ChatMessage): string | null {
  if (!m.parts && !m.toolCalls?.length && !m.toolCallId) return null;
  const data: MessageData = {};
  if (m.parts) data.parts = m.parts;
  if (m.toolCalls?.length) data.toolCalls = m.toolCalls;
  if (m.toolCallId) data.toolCallId = m.toolCallId;
  return JSON.stringify(data);
}

/**
 * Dead turns, locked: leases held by a turn, past their expiry (or exactly `threadId`'s, and
 * then also `turnId`'s when given: a run's next attempt knows its previous call died). SKIP LOCKED:
 * a row a finish holds is that turn finishing, and a second sweep does not wait for the first.
 * FOR UPDATE re-reads a row changed since the statement's snapshot, so a turn that finished
 * meanwhile (turn_id cleared) is not taken. Seq scan of threads: an index on the lease would make
 * every turn's two thread updates non-HOT (docs/design/billing-reservations.md).
 */
function deadCte(p: Param, which: "expired" | "thread" | "turn"): string {
  const where =
    which === "expired"
      ? `${T.turnId} is not null and ${T.busyUntil} < now()`
      : `${T.id} = ${p("threadId")} and ${T.turnId} is not null and ${which === "turn" ? `${T.turnId} = ${p("turnId")}` : `${T.busyUntil} < now()`}`;
  return `dead as (select ${T.id} as thread_id, ${T.turnId} as turn_id, ${T.agent} as agent_id from ${T.table} where ${where} limit ${p("limit")} for update skip locked),
          unleased as (update ${T.table} t set ${T.busyUntil} = null, ${T.turnId} = null from dead where t.${T.id} = dead.thread_id returning t.${T.id})`;
}
type ReclaimWhich = "expired" | "thread" | "turn";

/** The reclaim's statements, one per `which`: this module's, or a caller's extension of them (`reclaimStatements`). */
export type ReclaimStatements = Readonly<Record<ReclaimWhich, Statement>>;

/**
 * What a caller above `threads` ends with the dead turns, in the reclaim's own statement (A2A: the
 * turns' tasks, with their push notifications): CTEs that read `dead` (thread_id, turn_id,
 * agent_id: the threads whose turn died, locked), and columns of the result.
 */
export interface ReclaimExtension {
  name: string;
  ctes: (p: Param) => string;
  columns: string;
}

/** The reclaim's statements, optionally extended; built once per caller, when its module loads, so they stay prepared. */
export function reclaimStatements(extension?: ReclaimExtension): ReclaimStatements {
  const one = (which: ReclaimWhich) =>
    statement(
      `thread-reclaim-${which}${extension ? `-${extension.name}` : ""}`,
      (p) => `with ${deadCte(p, which)}, ${reclaimCte("dead")}${extension ? `,
          ${extension.ctes(p)}` : ""}
       select (select count(*) from unleased)::int as turns, (select count(*) from reclaimed)::int as holds, coalesce((select sum(amount) from reclaimed), 0)::text as micros${extension ? `, ${extension.columns}` : ""}`,
    );
  return { expired: one("expired"), thread: one("thread"), turn: one("turn") };
}
const RECLAIM = reclaimStatements();
const RECLAIM_BATCH = 500;

/**
 * Settles turns that died between hold and finish: frees their leases and hands each unsettled
 * hold back whole, exactly once (a late finish of such a turn then finds its lease gone and saves
 * nothing). Without `threadId`: every expired lease, in batches (the periodic sweep); with it,
 * that thread's expired lease (a new turn wants it), or with `turnId` that turn's lease whether
 * expired or not (a run's next attempt after a crash).
 */
export async function reclaimExpiredTurns(
  pool: pg.Pool,
  only: { threadId?: string; turnId?: string } = {},
  statements: ReclaimStatements = RECLAIM,
): Promise<{ turns: number; holds: number; micros: number }> {
  const which = only.turnId ? "turn" : only.threadId ? "thread" : "expired";
  const total = { turns: 0, holds: 0, micros: 0 };
  for (;;) {
    const { rows } = await pool.query<{ turns: number; holds: number; micros: string }>(statements[which].with({ threadId: only.threadId, turnId: only.turnId, limit: RECLAIM_BATCH }));
    const r = rows[0]!;
    total.turns += r.turns;
    total.holds += r.holds;
    total.micros += Number(r.micros);
    if (which !== "expired" || r.turns < RECLAIM_BATCH) return total;
  }
}

const ANSWERED = statement(
  "thread-answered-turn",
  (p) => `with ${settledCallCte(p)}
     select s.model, s.input_tokens, s.output_tokens, s.cost::text as cost,
            (select m.${M.content} from ${M.table} m where m.${M.thread} = ${p("threadId")} and m.${M.role} = 'assistant' order by m.${M.seq} desc limit 1) as content
       from settled_call s`,
);

/**
 * What turn `turnId` answered, if its finish committed: the last assistant message of its thread
 * (the turn's own when nothing continued the thread since), its model, tokens and total cost.
 * For a run whose process died after the turn was saved and paid but before its journal step was
 * (jobs/script-host.ts): the step is completed from this instead of calling the model again.
 */
export async function answeredTurn(
  pool: pg.Pool,
  threadId: string,
  turnId: string,
): Promise<{ content: string; model: string; inputTokens: number; outputTokens: number; costMicros: number } | undefined> {
  const { rows } = await pool.query<{ model: string; input_tokens: number; output_tokens: number; cost: string; content: string | null }>(ANSWERED.with({ threadId, reference: turnId }));
  const r = rows[0];
  if (!r || r.content === null) return undefined;
  return { content: r.content, model: r.model, inputTokens: r.input_tokens, outputTokens: r.output_tokens, costMicros: Number(r.cost) };
}

/** Extends the lease turn `turnId` holds: a turn whose answer streams longer than the lease keeps its thread. */
export async function renewLease(pool: pg.Pool, threadId: string, turnId: string, leaseMs: number): Promise<void> {
  await pool.query(RENEW.with({ threadId, turnId, leaseMs }));
}

/** Gives the lease back without saving anything (the turn was refused after the lease). */
export async function releaseLease(pool: pg.Pool, threadId: string, turnId: string): Promise<void> {
  await pool.query(UNLEASE.with({ threadId, turnId }));
}
