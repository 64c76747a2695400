import type pg from "pg";
import { withTransaction } from "../db/tx.js";
import { sqlNames } from "../db/names.js";
import { Account, ApiKey, LedgerEntry } from "../db/schema.js";
import { statement, type Param } from "../db/statement.js";

/**
 * Hold-and-settle (DESIGN §5), the only SQL that moves an account's balance during a call. The
 * hold is one conditional UPDATE (`balance >= hold`), so concurrent holds serialise on the account
 * row and none can overdraw; its ledger row is written in the same statement. Settling credits
 * back the unused part. The hold and the release are fragments (`holdCte`, `releaseCte`) so the
 * chat hot path can run them inside its own statements (src/chat/store.ts, src/threads/store.ts)
 * and still make one round trip.
 */

const A = sqlNames(Account);
const K = sqlNames(ApiKey);
const L = sqlNames(LedgerEntry);

/** `<name> as (insert one ledger row per row of <from>)`. */
function ledgerCte(p: Param, name: string, from: string, kind: "hold" | "hold_release", amount: string): string {
  return `${name} as (insert into ${L.table} (${L.account}, ${L.amountMicros}, ${L.kind}, ${L.reference}, ${L.createdAt})
                 select ${p("accountId")}, ${amount}, '${kind}', ${p("reference")}, now() from ${from})`;
}

/**
 * CTEs `hold` (the account row when the hold was placed; empty when not) and `hold_ledger`.
 * Parameters: accountId, hold (micro-USD), reference, keyId (text or null: the API key must still
 * exist, which makes revocation exact even against a stale in-memory key cache). `condition` is
 * one more SQL condition the hold requires (the chat hot path: the rate-limit count).
 */
export function holdCte(p: Param, condition?: string): string {
  return `hold as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} - ${p("hold")}
                 where ${A.id} = ${p("accountId")} and ${A.balanceMicros} >= ${p("hold")}
                   and (${p("keyId")}::text is null or exists (select 1 from ${K.table} where ${K.id} = ${p("keyId")}))
                   ${condition ? `and ${condition}` : ""}
                 returning ${A.id}),
          ${ledgerCte(p, "hold_ledger", "hold", "hold", `-${p("hold")}::bigint`)}`;
}

/**
 * CTEs `hold_release` and `hold_release_ledger`: credits back `release` micro-USD (nothing when it
 * is 0). Parameters: accountId, release, reference.
 */
export function releaseCte(p: Param): string {
  return `hold_release as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} + ${p("release")}
                 where ${A.id} = ${p("accountId")} and ${p("release")}::bigint > 0 returning ${A.id}),
          ${ledgerCte(p, "hold_release_ledger", "hold_release", "hold_release", `${p("release")}::bigint`)}`;
}

const PLACE_HOLD = statement("billing-place-hold", (p) => `with ${holdCte(p)} select exists (select 1 from hold) as ok`);
const RELEASE = statement("billing-release", (p) => `with ${releaseCte(p)} select 1`);

/** The whole amount of a hold that nothing settled yet (no release or charge with its reference). */
const RELEASE_UNSETTLED = statement(
  "billing-release-unsettled-hold",
  (p) => `with h as (select -${L.amountMicros} as amount from ${L.table}
                   where ${L.account} = ${p("accountId")} and ${L.reference} = ${p("reference")} and ${L.kind} = 'hold'
                     and not exists (select 1 from ${L.table} where ${L.account} = ${p("accountId")} and ${L.reference} = ${p("reference")} and ${L.kind} in ('hold_release', 'charge'))),
          a as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} + (select amount from h) where ${A.id} = ${p("accountId")} and exists (select 1 from h) returning ${A.id})
     insert into ${L.table} (${L.account}, ${L.amountMicros}, ${L.kind}, ${L.reference}, ${L.createdAt})
     select ${p("accountId")}, (select amount from h), 'hold_release', ${p("reference")}, now() from a`,
);

/** Hands back a hold whose call died with its process (nothing was produced or billed); false when already settled. */
export async function releaseUnsettledHold(pool: pg.Pool, accountId: string, reference: string): Promise<boolean> {
  return ((await pool.query(RELEASE_UNSETTLED.with({ accountId, reference }))).rowCount ?? 0) > 0;
}

/** Reserves `hold` if the balance covers it (and `keyId`, when given, still exists); false when it did not. */
export async function placeHold(pool: pg.Pool | pg.PoolClient, accountId: string, hold: number, reference: string, keyId?: string): Promise<boolean> {
  const { rows } = await pool.query<{ ok: boolean }>(PLACE_HOLD.with({ accountId, hold, reference, keyId: keyId ?? null }));
  return rows[0]!.ok;
}

/** Settles a hold to the real cost. When the cost exceeds the hold, the extra is charged only up to what the balance covers. */
export async function settleHold(pool: pg.Pool, accountId: string, hold: number, cost: number, reference: string): Promise<number> {
  if (cost <= hold) {
    if (hold > cost) await pool.query(RELEASE.with({ accountId, release: hold - cost, reference }));
    return cost;
  }
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<{ b: number }>(`select ${A.balanceMicros} as b from ${A.table} where ${A.id} = $1 for update`, [accountId]);
    const extra = Math.min(cost - hold, rows[0]?.b ?? 0);
    if (extra > 0) {
      await db.query(`update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} - $2 where ${A.id} = $1`, [accountId, extra]);
      await db.query(
        `insert into ${L.table} (${L.account}, ${L.amountMicros}, ${L.kind}, ${L.reference}, ${L.createdAt}) values ($1, $2, 'charge', $3, now())`,
        [accountId, -extra, reference],
      );
    }
    return hold + extra;
  });
}
