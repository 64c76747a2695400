import type pg from "pg";
import { vi } from "vitest";

/** A query as the pool got it: its prepared statement's name, if any, its text and its values. */
export interface SpiedQuery {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * Spies a pool's queries (test code only): `seen` in order. `around` may hold a query back (a
 * promise it runs after) or fail it (an error it rejects with) instead of running it now.
 */
export function spyQueries(pool: pg.Pool, around?: (q: SpiedQuery) => Promise<void> | Error | undefined): { seen: SpiedQuery[]; restore: () => void } {
  const seen: SpiedQuery[] = [];
  const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
  const spy = vi.spyOn(pool, "query").mockImplementation(((q: unknown, ...rest: unknown[]) => {
    const spied: SpiedQuery =
      typeof q === "string" ? { text: q, values: rest[0] as unknown[] | undefined } : { name: (q as SpiedQuery).name, text: (q as SpiedQuery).text, values: (q as SpiedQuery).values };
    seen.push(spied);
    const r = around?.(spied);
    if (r instanceof Error) return Promise.reject(r);
    if (r) return r.then(() => query(q, ...rest));
    return query(q, ...rest);
  }) as typeof pool.query);
  return { seen, restore: () => spy.mockRestore() };
}
