import type pg from "pg";
import { sqlNames } from "../db/names.js";
import { Account, ApiKey, ApiKeySpend, LedgerEntry } from "../db/schema.js";
import type { Param } from "../db/statement.js";

/**
 * Per-key spend limits (docs/guides/chat.md): a key with `spend_limit_micros` has one `api_key_spend` row per
 * period (UTC day, UTC month, or one for all time) holding what its open holds and settled calls
 * add up to. The row moves only inside the statements that move the balance (billing/ledger.ts
 * `holdCte`, `releaseCte`, the extra charge), so a hold counts against the key's limit exactly as
 * against the balance: no cached counter, no window between the two checks.
 */

const A = sqlNames(Account);
const K = sqlNames(ApiKey);
const S = sqlNames(ApiKeySpend);
const L = sqlNames(LedgerEntry);

export const SPEND_LIMIT_PERIODS = ["DAY", "MONTH", "TOTAL"] as const;
export type SpendLimitPeriod = (typeof SPEND_LIMIT_PERIODS)[number];

/** The start (UTC) of the period of kind `period` (SQL text) that contains the instant `at` (SQL). */
export function periodStartSql(period: string, at: string): string {
  return `(case ${period} when 'DAY' then date_trunc('day', ${at}, 'UTC') when 'MONTH' then date_trunc('month', ${at}, 'UTC') else 'epoch'::timestamptz end)`;
}

/**
 * CTEs for the hold: `key_limit` (the key's limit and current period; empty without a limit),
 * `hold_account` (the account row, locked: its latest balance), `hold_gate` (one row when that
 * balance covers the hold and `condition` holds) and `key_spend` (the key's period row, raised by
 * the hold only if it stays within the limit). The hold must require `exists (select 1 from
 * hold_gate)` and `keySpendAllows`: both decisions are then made on the same locked balance, and
 * locks are always taken account row first, spend row second.
 * Parameters: accountId, keyId, and `hold` unless `amount` (an SQL expression) gives the hold.
 * `lockAfter` (an SQL condition without columns of the account row, so PostgreSQL decides it
 * before reading the row): the account row is locked, and the hold considered, only when it
 * holds — a statement that locks another row first (a continuation's thread lease) keeps its lock
 * order, and does not lock the account at all when that failed.
 */
export function keySpendCtes(p: Param, condition: string, amount = p("hold"), lockAfter?: string): string {
  return `key_limit as (select ${K.spendLimitMicros} as lim, ${periodStartSql(K.spendLimitPeriod, "now()")} as period from ${K.table}
                         where ${K.id} = ${p("keyId")} and ${K.spendLimitMicros} is not null),
          hold_account as (select ${A.balanceMicros} as balance from ${A.table} where ${A.id} = ${p("accountId")}${lockAfter ? ` and ${lockAfter}` : ""} for update),
          hold_gate as (select 1 from hold_account where balance >= ${amount} and ${condition}),
          key_spend as (insert into ${S.table} (${S.apiKey}, ${S.periodStart}, ${S.spentMicros})
                 select ${p("keyId")}, period, ${amount} from key_limit where ${amount} <= lim and exists (select 1 from hold_gate)
                 on conflict (${S.apiKey}, ${S.periodStart}) do update set ${S.spentMicros} = ${S.table}.${S.spentMicros} + excluded.${S.spentMicros}
                   where ${S.table}.${S.spentMicros} + excluded.${S.spentMicros} <= (select lim from key_limit)
                 returning 1)`;
}

/** The hold's condition for the key's limit: no limit, or the spend row took the hold. */
export const keySpendAllows = "(not exists (select 1 from key_limit) or exists (select 1 from key_spend))";

/**
 * Select-list item for a statement with `holdCte`: whether the key's spend row took the hold.
 * The account row's UPDATE still checks the balance on the row version its snapshot sees (READ
 * COMMITTED: a version that fails is not re-read), so it may refuse a hold the locked, newer
 * balance would cover (a top-up or release committed a moment earlier); the spend row has taken
 * it by then. Such a statement answers `key_held` without `ok`, and `undoKeyHold` gives it back.
 */
export const KEY_HELD_COLUMN = "exists (select 1 from key_spend) as key_held, exists (select 1 from hold_gate) as funded, exists (select 1 from key_limit) as key_limited";

export interface HoldOutcome {
  ok: boolean;
  key_held: boolean;
  funded: boolean;
  key_limited: boolean;
}

/** What a refused hold's statement says about why: the key's limit (the balance covered it) or not. */
export function keyLimitRefused(row: HoldOutcome): boolean {
  return !row.ok && row.funded && row.key_limited && !row.key_held;
}

/** Gives back a hold the key's spend row took for a hold the balance then refused (see KEY_HELD_COLUMN). */
export async function undoKeyHold(pool: pg.Pool, keyId: string, hold: number): Promise<void> {
  await pool.query(
    `update ${S.table} s set ${S.spentMicros} = greatest(0, s.${S.spentMicros} - $2) from ${K.table} k
      where k.${K.id} = $1 and s.${S.apiKey} = k.${K.id} and s.${S.periodStart} = ${periodStartSql(`k.${K.spendLimitPeriod}`, "now()")}`,
    [keyId, hold],
  );
}

/** The key's row (`k`) and the instant its hold (the call's `reference` on `threadId`) was placed (`h.at`). */
function holdPeriodFrom(p: Param): string {
  return `${K.table} k, (select ${L.createdAt} as at from ${L.table} where ${L.threadId} = ${p("threadId")} and ${L.reference} = ${p("reference")} and ${L.kind} = 'hold' limit 1) h`;
}
function holdPeriodWhere(p: Param): string {
  return `k.${K.id} = ${p("keyId")} and ${S.apiKey} = k.${K.id} and k.${K.spendLimitMicros} is not null and ${S.periodStart} = ${periodStartSql(`k.${K.spendLimitPeriod}`, "h.at")}`;
}

/**
 * CTE `key_release`: hands `amount` (SQL) back to the key's row of the period its hold was placed
 * in (not the current one: a call may end after midnight), when `when` (SQL condition) holds.
 * Parameters: keyId, threadId, reference.
 */
export function keyReleaseCte(p: Param, amount: string, when: string): string {
  return `key_release as (update ${S.table} set ${S.spentMicros} = greatest(0, ${S.spentMicros} - ${amount})
                 from ${holdPeriodFrom(p)} where ${holdPeriodWhere(p)} and ${when} returning 1)`;
}

/**
 * CTE `batch_key_release`: the batched finish's `keyReleaseCte` — hands back each settled turn's
 * release to its key's row of the period its hold was placed in, summed per row. `settled` has
 * (key_id, held_at, release) rows; nothing moves unless `released` (a CTE: the account's credit)
 * has a row, so the key row moves only with the balance, after it (locks: account row first).
 */
export function keyReleaseBatchCte(settled: string, released: string): string {
  return `batch_key_release as (update ${S.table} s set ${S.spentMicros} = greatest(0, s.${S.spentMicros} - x.amount)
                 from (select st.key_id, ${periodStartSql(`k.${K.spendLimitPeriod}`, "st.held_at")} as period, sum(st.release)::bigint as amount
                         from ${settled} st cross join lateral (select ${K.spendLimitPeriod} from ${K.table} where ${K.id} = st.key_id and ${K.spendLimitMicros} is not null limit 1) k
                        where st.release > 0 group by 1, 2) x
                where s.${S.apiKey} = x.key_id and s.${S.periodStart} = x.period and exists (select 1 from ${released}))`;
}

/**
 * CTE `reclaim_key`: hands back what reclaimed holds took from their keys' spend rows, each in the
 * period its hold was placed in. `reclaimed` has (account, key_id, held_at, amount) rows; only
 * those whose account `credited` (a CTE of account ids) credited count, so the key row moves only
 * with the balance, after it (locks: account row first, spend row second).
 */
export function keyReclaimCte(reclaimed: string, credited: string): string {
  return `reclaim_key as (update ${S.table} s set ${S.spentMicros} = greatest(0, s.${S.spentMicros} - x.amount)
                 from (select r.key_id, ${periodStartSql(`k.${K.spendLimitPeriod}`, "r.held_at")} as period, sum(r.amount)::bigint as amount
                         from ${reclaimed} r join ${K.table} k on k.${K.id} = r.key_id
                        where k.${K.spendLimitMicros} is not null and r.account in (select ${A.id} from ${credited})
                        group by 1, 2) x
                where s.${S.apiKey} = x.key_id and s.${S.periodStart} = x.period)`;
}

/** CTE `key_charge`: adds `extra` (a charge beyond the hold, the `charged` CTE) to the hold's period row. */
export function keyChargeCte(p: Param): string {
  return `key_charge as (update ${S.table} set ${S.spentMicros} = ${S.spentMicros} + ${p("extra")}::bigint
                 from ${holdPeriodFrom(p)} where ${holdPeriodWhere(p)} and exists (select 1 from charged) returning 1)`;
}

/**
 * What the key's limit has left in its hold's period (Infinity without a limit). Call with the
 * account row locked: every hold of the key locks it first, so the room cannot shrink meanwhile.
 */
export async function keyRoomMicros(db: pg.PoolClient, keyId: string, threadId: string, reference: string): Promise<number> {
  const param = (name: string) => (name === "keyId" ? "$1" : name === "threadId" ? "$2" : "$3");
  const { rows } = await db.query<{ lim: string | null; spent: string | null }>(
    `select k.${K.spendLimitMicros} as lim, (select ${S.spentMicros} from ${S.table} where ${holdPeriodWhere(param)}) as spent
       from ${holdPeriodFrom(param)} where k.${K.id} = $1`,
    [keyId, threadId, reference],
  );
  const r = rows[0];
  if (!r || r.lim === null) return Infinity;
  return Math.max(0, Number(r.lim) - Number(r.spent ?? 0));
}

/** What each key with a limit has spent (held or settled) in its current period, in micro-USD. */
export async function keysSpentMicros(pool: pg.Pool, keyIds: string[]): Promise<Map<string, number>> {
  if (keyIds.length === 0) return new Map();
  const { rows } = await pool.query<{ id: string; spent: string }>(
    `select k.${K.id} as id, coalesce(s.${S.spentMicros}, 0) as spent from ${K.table} k
       left join ${S.table} s on s.${S.apiKey} = k.${K.id} and s.${S.periodStart} = ${periodStartSql(`k.${K.spendLimitPeriod}`, "now()")}
      where k.${K.id} = any($1) and k.${K.spendLimitMicros} is not null`,
    [keyIds],
  );
  return new Map(rows.map((r) => [r.id, Number(r.spent)]));
}

/**
 * Sets the key's current-period row to what the ledger says it spent in that period (holds net of
 * releases and charges), for a limit or period just set. Nothing without a limit.
 */
export async function seedKeySpend(pool: pg.Pool, accountId: string, keyId: string): Promise<void> {
  await pool.query(
    `with k as (select ${K.id} as id, ${periodStartSql(K.spendLimitPeriod, "now()")} as period from ${K.table} where ${K.id} = $2 and ${K.spendLimitMicros} is not null)
     insert into ${S.table} (${S.apiKey}, ${S.periodStart}, ${S.spentMicros})
     select k.id, k.period, greatest(0, coalesce((select -sum(${L.amountMicros}) from ${L.table}
              where ${L.account} = $1 and ${L.apiKeyId} = k.id and ${L.createdAt} >= k.period and ${L.kind} in ('hold', 'hold_release', 'charge')), 0)) from k
     on conflict (${S.apiKey}, ${S.periodStart}) do update set ${S.spentMicros} = excluded.${S.spentMicros}`,
    [accountId, keyId],
  );
}
