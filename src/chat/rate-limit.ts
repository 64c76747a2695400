import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * Per-key requests-per-minute, counted in PostgreSQL so every API instance shares one budget.
 * One table for every limit value (the count is per key; the limit is applied in JS), so
 * changing a key's limit keeps its current window.
 */
const TABLE = "chat_rate_limits";
const DURATION_S = 60;

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

export class KeyRateLimiter {
  private readonly limiters = new Map<number, RateLimiterPostgres>();
  private table: Promise<void> | undefined;

  constructor(private readonly runtime: Runtime) {}

  /** Creates the counter table once per process; racing instances are fine (if not exists + retry). */
  private ensureTable(): Promise<void> {
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

  private limiter(points: number): RateLimiterPostgres {
    let l = this.limiters.get(points);
    if (!l) {
      l = new RateLimiterPostgres({
        storeClient: this.runtime.pool,
        storeType: "pool",
        tableName: TABLE,
        tableCreated: true,
        keyPrefix: "key",
        points,
        duration: DURATION_S,
        clearExpiredByTimeout: false,
      });
      this.limiters.set(points, l);
    }
    return l;
  }

  /** Counts one request; throws 429 rate_limit_exceeded (with Retry-After) when over the limit. */
  async consume(keyId: string, limit: number): Promise<RateLimitState> {
    await this.ensureTable();
    try {
      const r = await this.limiter(limit).consume(keyId, 1);
      return { limit, remaining: r.remainingPoints, resetMs: r.msBeforeNext };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        const state = { limit, remaining: 0, resetMs: err.msBeforeNext };
        throw new AppError("rate_limit_exceeded", `Rate limit reached: ${limit} requests per minute for this key; retry after ${Math.ceil(err.msBeforeNext / 1000)} s`, {
          headers: { ...rateLimitHeaders(state), "retry-after": String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))) },
        });
      }
      throw err;
    }
  }

  /** Deletes counters whose window ended long ago (called periodically, not per request). */
  async sweep(): Promise<void> {
    await this.ensureTable();
    await this.runtime.pool.query(`delete from ${TABLE} where expire < $1`, [Date.now() - 3_600_000]);
  }
}
