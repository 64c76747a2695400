import type pg from "pg";
import { withTransaction } from "../db/tx.js";

/**
 * Hold-and-settle (DESIGN §5). The hold is one conditional UPDATE (`balance >= hold`), so
 * concurrent holds serialise on the account row and none can overdraw; the ledger row is written
 * in the same statement. Settling credits back the unused part.
 */

/** Settles a hold to the real cost. When the cost exceeds the hold, the extra is charged only up to what the balance covers. */
export async function settleHold(pool: pg.Pool, accountId: string, hold: number, cost: number, reference: string): Promise<number> {
  if (cost <= hold) {
    const release = hold - cost;
    if (release > 0) {
      await pool.query(
        `with a as (update accounts set balance_micros = balance_micros + $2 where id = $1 returning id)
         insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) select $1, $2, 'hold_release', $3, now() from a`,
        [accountId, release, reference],
      );
    }
    return cost;
  }
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<{ b: number }>("select balance_micros as b from accounts where id = $1 for update", [accountId]);
    const extra = Math.min(cost - hold, rows[0]?.b ?? 0);
    if (extra > 0) {
      await db.query("update accounts set balance_micros = balance_micros - $2 where id = $1", [accountId, extra]);
      await db.query("insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) values ($1, $2, 'charge', $3, now())", [
        accountId,
        -extra,
        reference,
      ]);
    }
    return hold + extra;
  });
}

/** Hands a whole hold back (the call failed before producing anything). */
export async function releaseHold(pool: pg.Pool, accountId: string, hold: number, reference: string): Promise<void> {
  await settleHold(pool, accountId, hold, 0, reference);
}

/**
 * Reserves `hold` if the balance covers it. With `keyId`, also requires the API key to still
 * exist, which makes revocation exact even against a stale in-memory key cache.
 * Returns false when it did not reserve (balance too low or key gone).
 */
export async function placeHold(pool: pg.Pool | pg.PoolClient, accountId: string, hold: number, reference: string, keyId?: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `with h as (update accounts set balance_micros = balance_micros - $2
                 where id = $1 and balance_micros >= $2 and ($4::text is null or exists (select 1 from api_keys where id = $4)) returning id)
     insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) select $1, -$2::bigint, 'hold', $3, now() from h`,
    [accountId, hold, reference, keyId ?? null],
  );
  return rowCount === 1;
}
