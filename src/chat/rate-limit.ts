import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * Per-key requests-per-minute, counted in PostgreSQL so every API instance shares one budget.
 *
 * A fixed window per key, in the table layout and with the exact semantics of
 * rate-limiter-flexible's RateLimiterPostgres (which this replaced): row `key:<keyId>` holds
 * `points` (requests counted in the window) and `expire` (epoch ms when the window ends). The
 * first request after `expire` starts a new 60 s window at 1; every other request adds 1, refused
 * ones included. A request is allowed while points <= limit. One table for every limit value (the
 * limit is applied per request), so changing a key's limit keeps its current window.
 *
 * The counter is one upsert, written as an SQL fragment (`RATE_LIMIT_CTE`) so the chat hot path
 * can run it in the same statement as the hold (src/threads/store.ts openThreadWithHold): one
 * database round trip instead of two. `consume()` runs it alone (thread continuations, and
 * requests refused before the hold).
 */
const TABLE = "chat_rate_limits";
const DURATION_MS = 60_000;
const KEY_PREFIX = "key:";

/**
 * The `rl` CTE: counts one request and returns `points, expire`. `k`, `e`, `n` are the positions
 * of its parameters in the statement: key, new expire (now + window), now (epoch ms), as
 * `rateLimitParams` returns them.
 */
export function rateLimitCte(k: number, e: number, n: number): string {
  return `rl as (insert into ${TABLE} as t (key, points, expire) values ($${k}, 1, $${e}::bigint)
                 on conflict (key) do update set
                   points = case when t.expire <= $${n}::bigint then 1 else t.points + 1 end,
                   expire = case when t.expire <= $${n}::bigint then $${e}::bigint else t.expire end
                 returning points, expire)`;
}

/** Values for `rateLimitCte`'s three parameters, in order (key, new expire, now). */
export function rateLimitParams(keyId: string, now = Date.now()): [string, number, number] {
  return [KEY_PREFIX + keyId, now + DURATION_MS, now];
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetMs: number;
}

export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    "x-ratelimit-limit-requests": String(s.limit),
    "x-ratelimit-remaining-requests": String(Math.max(0, s.remaining)),
    "x-ratelimit-reset-requests": `${Math.max(0, Math.ceil(s.resetMs / 1000))}s`,
  };
}

/** The state after a counted request (points and expire as the upsert returned them). */
export function rateLimitState(limit: number, points: number, expire: number | string, now = Date.now()): RateLimitState {
  return { limit, remaining: Math.max(limit - points, 0), resetMs: Math.max(Number(expire) - now, 0) };
}

/** 429 rate_limit_exceeded with Retry-After and the rate-limit headers. */
export function rateLimitError(state: RateLimitState): AppError {
  const s = { ...state, remaining: 0 };
  const retry = Math.max(1, Math.ceil(s.resetMs / 1000));
  return new AppError("rate_limit_exceeded", `Rate limit reached: ${s.limit} requests per minute for this key; retry after ${Math.ceil(s.resetMs / 1000)} s`, {
    headers: { ...rateLimitHeaders(s), "retry-after": String(retry) },
  });
}

const CONSUME = { name: "chat-rate-limit", text: `with ${rateLimitCte(1, 2, 3)} select points, expire from rl` };

/**
 * Counts one request on its own (one round trip); throws 429 rate_limit_exceeded (with
 * Retry-After) when over the limit, after `onState` saw the state (for the response headers).
 */
export async function consumeRateLimit(pool: pg.Pool, keyId: string, limit: number, onState?: (s: RateLimitState) => void): Promise<RateLimitState> {
  const now = Date.now();
  const { rows } = await pool.query<{ points: number; expire: string }>({ ...CONSUME, values: rateLimitParams(keyId, now) });
  const state = rateLimitState(limit, rows[0]!.points, rows[0]!.expire, now);
  onState?.(state);
  if (rows[0]!.points > limit) throw rateLimitError(state);
  return state;
}

export class KeyRateLimiter {
  private table: Promise<void> | undefined;

  constructor(private readonly runtime: Runtime) {}

  /** Creates the counter table once per process; racing instances are fine (if not exists + retry). */
  ensureTable(): Promise<void> {
    this.table ??= (async () => {
      const sql = `create table if not exists ${TABLE} (key varchar(255) primary key, points integer not null default 0, expire bigint)`;
      try {
        await this.runtime.pool.query(sql);
      } catch {
        await this.runtime.pool.query(sql); // concurrent create: the second attempt sees the table
      }
    })().catch((err) => {
      this.table = undefined;
      throw err;
    });
    return this.table;
  }

  /** Counts one request on its own; throws 429 rate_limit_exceeded (with Retry-After) when over the limit. */
  async consume(keyId: string, limit: number, onState?: (s: RateLimitState) => void): Promise<RateLimitState> {
    await this.ensureTable();
    return consumeRateLimit(this.runtime.pool, keyId, limit, onState);
  }

  /** Deletes counters whose window ended long ago (called periodically, not per request). */
  async sweep(): Promise<void> {
    await this.ensureTable();
    await this.runtime.pool.query(`delete from ${TABLE} where expire < $1`, [Date.now() - 3_600_000]);
  }
}
