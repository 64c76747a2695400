import type pg from "pg";
import { holdCte, KEY_HELD_COLUMN, keyLimitRefused, undoKeyHold, type CallTags, type HoldOutcome } from "../billing/ledger.js";
import { ASYNC_COMMIT_CTE, statement } from "../db/statement.js";
import { newThreadCte } from "../threads/store.js";
import { rateLimitCte, rateLimitValues } from "./rate-limit.js";

/**
 * The statement that starts a chat turn on a new thread: (rate-limit count +) hold + thread, in
 * one round trip. No thread is created for a request that is refused for balance, a key deleted a
 * moment ago, or (with the rate limit) a count over the key's limit; a refused request still
 * counts in its window.
 *
 * Both commit asynchronously (ASYNC_COMMIT_CTE): the hold, the thread and the count are visible to
 * every other transaction at once, so holds and counts serialise exactly as with a synchronous
 * commit, and the turn's synchronous finish (threads/store.ts `finishTurn`) makes them durable
 * before the answer leaves. A database crash in between may lose them; the finish then refuses
 * to settle a hold that is not there (docs/billing-reservations.md, option B).
 */
const OPEN = statement(
  "chat-open-thread",
  (p) => `with ${ASYNC_COMMIT_CTE}, ${holdCte(p)}, ${newThreadCte(p, "hold")}
     select exists (select 1 from hold) as ok, ${KEY_HELD_COLUMN}, (select async_commit from async_commit)`,
);
const OPEN_RATE_LIMITED = statement(
  "chat-open-thread-rate-limited",
  (p) => `with ${ASYNC_COMMIT_CTE}, ${rateLimitCte(p)}, ${holdCte(p, `(select points from rate_limit) <= ${p("rateLimit")}::int`)}, ${newThreadCte(p, "hold")}
     select exists (select 1 from hold) as ok, ${KEY_HELD_COLUMN}, (select points from rate_limit) as points, (select expire from rate_limit) as expire, (select async_commit from async_commit)`,
);

export async function openThreadWithHold(
  pool: pg.Pool,
  a: {
    threadId: string;
    accountId: string;
    agentId: string;
    hold: number;
    reference: string;
    /** The call's ledger tags; `keyId` there also makes the hold re-check the key exists. */
    tags: CallTags;
    leaseMs: number;
    rateLimit?: { keyId: string; limit: number };
  },
): Promise<{ ok: boolean; keyLimited: boolean; rateLimit?: { points: number; expire: number; now: number } }> {
  const values = { ...a.tags, threadId: a.threadId, accountId: a.accountId, agentId: a.agentId, hold: a.hold, reference: a.reference, leaseMs: a.leaseMs };
  if (!a.rateLimit) {
    const { rows } = await pool.query<HoldOutcome>(OPEN.with(values));
    if (!rows[0]!.ok && rows[0]!.key_held && a.tags.keyId) await undoKeyHold(pool, a.tags.keyId, a.hold);
    return { ok: rows[0]!.ok, keyLimited: keyLimitRefused(rows[0]!) };
  }
  const now = Date.now();
  const { rows } = await pool.query<HoldOutcome & { points: number; expire: number }>(
    OPEN_RATE_LIMITED.with({ ...values, ...rateLimitValues(a.rateLimit.keyId, now), rateLimit: a.rateLimit.limit }),
  );
  const row = rows[0]!;
  if (!row.ok && row.key_held) await undoKeyHold(pool, a.tags.keyId ?? a.rateLimit.keyId, a.hold);
  return { ok: row.ok, keyLimited: keyLimitRefused(row), rateLimit: { points: row.points, expire: row.expire, now } };
}
