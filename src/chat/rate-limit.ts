import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { sqlNames } from "../db/names.js";
import { RateLimitWindow } from "../db/schema.js";
import { statement, type Param } from "../db/statement.js";

/**
 * Per-key requests-per-minute, counted in PostgreSQL so every API instance shares one budget.
 *
 * A fixed window per key, in the table layout and with the exact semantics of
 * rate-limiter-flexible's RateLimiterPostgres (which this replaced): row `key:<keyId>` holds
 * `points` (requests counted in the window) and `expire` (epoch ms when the window ends). The
 * first request after `expire` starts a new 60 s window at 1; every other request adds 1, refused
 * ones included. A request is allowed while points <= limit. One table for every limit value (the
 * limit is applied per request), so changing a key's limit keeps its current window. The table is
 * the `RateLimitWindow` entity (created by a migration).
 *
 * The counter is one upsert, written as a fragment (`rateLimitCte`) so the chat hot path can run
 * it in the same statement as the hold (src/chat/store.ts: a new thread's open and a
 * continuation's, with its lease): one database round trip. `consumeRateLimit()` runs it alone
 * (requests refused before the hold, MCP's job tools).
 */
const R = sqlNames(RateLimitWindow);
const DURATION_MS = 60_000;
const KEY_PREFIX = "key:";

/**
 * The `rate_limit` CTE: counts one request and returns `points, expire`. Its parameters are
 * those `rateLimitValues` returns.
 */
export function rateLimitCte(p: Param): string {
  const [key, expire, now] = [p("rateLimitKey"), `${p("rateLimitExpire")}::bigint`, `${p("rateLimitNow")}::bigint`];
  return `rate_limit as (insert into ${R.table} as t (${R.key}, ${R.points}, ${R.expire}) values (${key}, 1, ${expire})
                 on conflict (${R.key}) do update set
                   ${R.points} = case when t.${R.expire} <= ${now} then 1 else t.${R.points} + 1 end,
                   ${R.expire} = case when t.${R.expire} <= ${now} then ${expire} else t.${R.expire} end
                 returning ${R.points} as points, ${R.expire} as expire)`;
}

/** Values of `rateLimitCte`'s parameters. */
export function rateLimitValues(keyId: string, now: number) {
  return { rateLimitKey: KEY_PREFIX + keyId, rateLimitExpire: now + DURATION_MS, rateLimitNow: now };
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

/**
 * Reports a counted request's window to `onState` (for the response headers), then throws 429
 * rate_limit_exceeded when it is over the limit.
 */
export function enforceRateLimit(limit: number, counted: { points: number; expire: number | string }, now: number, onState?: (s: RateLimitState) => void): RateLimitState {
  const state = rateLimitState(limit, counted.points, counted.expire, now);
  onState?.(state);
  if (counted.points > limit) throw rateLimitError(state);
  return state;
}

const CONSUME = statement("chat-rate-limit", (p) => `with ${rateLimitCte(p)} select points, expire from rate_limit`);
const SWEEP = statement("chat-rate-limit-sweep", (p) => `delete from ${R.table} where ${R.expire} < ${p("before")}`);

/** Counts one request on its own (one round trip); see `enforceRateLimit`. */
export async function consumeRateLimit(pool: pg.Pool, keyId: string, limit: number, onState?: (s: RateLimitState) => void): Promise<RateLimitState> {
  const now = Date.now();
  const { rows } = await pool.query<{ points: number; expire: string }>(CONSUME.with(rateLimitValues(keyId, now)));
  return enforceRateLimit(limit, rows[0]!, now, onState);
}

/** Deletes counters whose window ended long ago (called periodically, not per request). */
export async function sweepRateLimits(pool: pg.Pool): Promise<void> {
  await pool.query(SWEEP.with({ before: Date.now() - 3_600_000 }));
}
