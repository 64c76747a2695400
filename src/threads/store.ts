import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import type { ChatMessage } from "../providers/types.js";
import { rateLimitCte, rateLimitParams } from "../chat/rate-limit.js";

/**
 * Thread persistence for the chat hot path, in hand-written SQL (one round trip per step).
 * A turn holds the thread's `busy_until` lease from start to save; a second turn meanwhile gets
 * 409, and a lease left by a crashed instance simply expires.
 */

/**
 * Opens a new thread together with the hold, in one statement: no thread is created for a
 * request that is refused for balance (or a key deleted a moment ago). With `rateLimit`, the same
 * statement first counts the request in the key's rate-limit window (src/chat/rate-limit.ts) and
 * places nothing when that count is over the limit: one round trip for rate limit + hold + thread.
 */
const OPEN_SQL = (withRateLimit: boolean) => `with ${withRateLimit ? `${rateLimitCte(8, 9, 10)},` : ""}
          h as (update accounts set balance_micros = balance_micros - $2
                 where id = $1 and balance_micros >= $2 and ($4::text is null or exists (select 1 from api_keys where id = $4))
                 ${withRateLimit ? "and (select points from rl) <= $11::int" : ""} returning id),
          l as (insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) select $1, -$2::bigint, 'hold', $3, now() from h),
          t as (insert into threads (id, account_id, agent_id, busy_until, message_count, created_at, updated_at)
                select $5, $1, $6, now() + make_interval(secs => $7::double precision / 1000), 0, now(), now() from h)
     select exists (select 1 from h) as ok${withRateLimit ? ", (select points from rl) as points, (select expire from rl) as expire" : ""}`;
const OPEN = { text: OPEN_SQL(false), name: "thread-open-hold" };
const OPEN_RL = { text: OPEN_SQL(true), name: "thread-open-hold-rl" };

export async function openThreadWithHold(
  pool: pg.Pool,
  a: {
    threadId: string;
    accountId: string;
    agentId: string;
    hold: number;
    reference: string;
    keyId?: string;
    leaseMs: number;
    rateLimit?: { keyId: string; limit: number };
  },
): Promise<{ ok: boolean; rateLimit?: { points: number; expire: string; now: number } }> {
  const values: unknown[] = [a.accountId, a.hold, a.reference, a.keyId ?? null, a.threadId, a.agentId, a.leaseMs];
  let now = 0;
  if (a.rateLimit) {
    const p = rateLimitParams(a.rateLimit.keyId);
    now = p[2];
    values.push(...p, a.rateLimit.limit);
  }
  const q = a.rateLimit ? OPEN_RL : OPEN;
  const { rows } = await pool.query<{ ok: boolean; points?: number; expire?: string }>({ ...q, values });
  const row = rows[0]!;
  return { ok: row.ok, ...(a.rateLimit ? { rateLimit: { points: row.points!, expire: row.expire!, now } } : {}) };
}

/** Takes the lease on an existing thread of this agent and reads its history, in one round trip. */
export async function leaseThread(
  pool: pg.Pool,
  a: { threadId: string; accountId: string; agentId: string; leaseMs: number },
): Promise<{ messageCount: number; history: ChatMessage[] }> {
  const { rows } = await pool.query<{ message_count: number; role: string | null; content: string | null; data: MessageData | null }>(
    `with l as (update threads set busy_until = now() + make_interval(secs => $4::double precision / 1000)
                 where id = $1 and account_id = $2 and agent_id = $3 and (busy_until is null or busy_until < now())
                 returning id, message_count)
     select l.message_count, m.role, m.content, m.data from l left join messages m on m.thread_id = l.id order by m.seq`,
    [a.threadId, a.accountId, a.agentId, a.leaseMs],
  );
  if (rows.length === 0) {
    const exists = await pool.query("select 1 from threads where id = $1 and account_id = $2 and agent_id = $3", [a.threadId, a.accountId, a.agentId]);
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

/**
 * Ends a turn: appends the messages (in order, after `baseSeq`), releases the lease and credits
 * back `release` micro-USD of the hold, all in one statement so a crash cannot keep one without
 * the other.
 */
export async function finishTurn(
  pool: pg.Pool,
  a: { threadId: string; accountId: string; baseSeq: number; messages: ChatMessage[]; release: number; reference: string },
): Promise<void> {
  await pool.query({
    name: "thread-finish-turn",
    text: `with r as (update accounts set balance_micros = balance_micros + $2 where id = $1 and $2::bigint > 0 returning id),
          l as (insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) select $1, $2::bigint, 'hold_release', $3, now() from r),
          m as (insert into messages (thread_id, seq, role, content, data, created_at)
                select $4, $5::int + x.ord::int, x.role, x.content, x.data::jsonb, now()
                  from unnest($6::text[], $7::text[], $9::text[]) with ordinality as x(role, content, data, ord))
     update threads set busy_until = null, message_count = message_count + $8, updated_at = now() where id = $4`,
    values: [
      a.accountId,
      a.release,
      a.reference,
      a.threadId,
      a.baseSeq,
      a.messages.map((m) => m.role),
      a.messages.map((m) => m.content),
      a.messages.length,
      a.messages.map(messageData),
    ],
  });
}
