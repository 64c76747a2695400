import type pg from "pg";
import { withTransaction } from "../db/tx.js";
import { sqlNames } from "../db/names.js";
import { Account, ApiKey, LedgerEntry } from "../db/schema.js";
import { ASYNC_COMMIT_CTE, statement, type Param } from "../db/statement.js";
import { KEY_HELD_COLUMN, keyChargeCte, keyLimitRefused, keyRoomMicros, keyReleaseCte, keySpendAllows, keySpendCtes, undoKeyHold, type HoldOutcome } from "./key-spend.js";

export { KEY_HELD_COLUMN, keyLimitRefused, undoKeyHold, type HoldOutcome } from "./key-spend.js";

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

/**
 * What a model call's ledger rows are for: every row of the call (hold, release, extra charge)
 * carries these, so usage() and the per-thread and per-job costs are sums over the ledger.
 * `keyId` is the API key (null for runs); trigger and job are null for the chat API.
 */
export interface CallTags {
  agentId: string;
  keyId: string | null;
  threadId: string;
  triggerId: string | null;
  jobId: string | null;
  model: string;
}

/**
 * `<name> as (insert one ledger row per row of <from>)`, tagged with the call (parameters
 * agentId, keyId, threadId, triggerId, jobId, model; with `tokens`, also inputTokens, outputTokens).
 */
function ledgerCte(p: Param, name: string, from: string, kind: "hold" | "hold_release" | "charge", amount: string, tokens: boolean): string {
  return `${name} as (insert into ${L.table} (${L.account}, ${L.amountMicros}, ${L.kind}, ${L.reference}, ${L.agentId}, ${L.apiKeyId}, ${L.threadId}, ${L.triggerId}, ${L.jobId}, ${L.model}, ${L.inputTokens}, ${L.outputTokens}, ${L.createdAt})
                 select ${p("accountId")}, ${amount}, '${kind}', ${p("reference")}, ${p("agentId")}, ${p("keyId")}, ${p("threadId")}, ${p("triggerId")}, ${p("jobId")}, ${p("model")},
                        ${tokens ? `${p("inputTokens")}::int, ${p("outputTokens")}::int` : "0, 0"}, now() from ${from})`;
}

/**
 * CTEs `hold` (the account row when the hold was placed; empty when not) and `hold_ledger`.
 * Parameters: accountId, hold (micro-USD), reference, keyId (text or null: the API key must still
 * exist, which makes revocation exact even against a stale in-memory key cache). `condition` is
 * one more SQL condition the hold requires (the chat hot path: the rate-limit count).
 */
export function holdCte(p: Param, condition?: string): string {
  // The key must still exist and not have expired; its spend limit (key-spend.ts) counts the hold
  // in the same statement, decided on the same locked balance.
  const keyUsable = `(${p("keyId")}::text is null or exists (select 1 from ${K.table} where ${K.id} = ${p("keyId")} and (${K.expiresAt} is null or ${K.expiresAt} > now())))`;
  return `${keySpendCtes(p, condition ? `${keyUsable} and ${condition}` : keyUsable)},
          hold as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} - ${p("hold")}
                 where ${A.id} = ${p("accountId")} and ${A.balanceMicros} >= ${p("hold")} and exists (select 1 from hold_gate) and ${keySpendAllows}
                 returning ${A.id}),
          ${ledgerCte(p, "hold_ledger", "hold", "hold", `-${p("hold")}::bigint`, false)}`;
}

/**
 * The `held` CTE: one row when the call's hold (`reference`, on thread `threadId`) is in the ledger
 * and nothing released it yet, else none. Settling requires it: the hold commits asynchronously,
 * so a database crash between hold and settle may have lost it, and crediting back a hold that
 * was never debited would hand the account money. It also makes a second settle of one hold a
 * no-op. Uses ledger_entries_thread_reference_idx. Parameters: accountId, threadId, reference.
 */
export function heldCte(p: Param): string {
  const call = `${L.threadId} = ${p("threadId")} and ${L.reference} = ${p("reference")}`;
  return `held as (select 1 as held from ${L.table} where ${call} and ${L.account} = ${p("accountId")} and ${L.kind} = 'hold'
                   and not exists (select 1 from ${L.table} where ${call} and ${L.kind} = 'hold_release'))`;
}

/**
 * CTEs `held` (see heldCte), `hold_release` and `hold_release_ledger`: credits back `release`
 * micro-USD of a hold that is still `held`. The ledger row is written even for 0: it is the one
 * row per call that settles it and carries its tokens. Parameters: accountId, release, reference,
 * the call's tags and tokens.
 */
export function releaseCte(p: Param): string {
  return `${heldCte(p)},
          hold_release as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} + ${p("release")}
                 where ${A.id} = ${p("accountId")} and ${p("release")}::bigint > 0 and exists (select 1 from held) returning ${A.id}),
          ${ledgerCte(p, "hold_release_ledger", "held", "hold_release", `${p("release")}::bigint`, true)},
          ${keyReleaseCte(p, `${p("release")}::bigint`, "exists (select 1 from hold_release)")}`;
}

const PLACE_HOLD = statement("billing-place-hold", (p) => `with ${ASYNC_COMMIT_CTE}, ${holdCte(p)} select exists (select 1 from hold) as ok, ${KEY_HELD_COLUMN}, (select async_commit from async_commit)`);
const CHARGE = statement(
  "billing-charge-extra",
  (p) => `with ${heldCte(p)},
          charged as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} - ${p("extra")} where ${A.id} = ${p("accountId")} and exists (select 1 from held) returning ${A.id}),
          ${ledgerCte(p, "charge_ledger", "charged", "charge", `-${p("extra")}::bigint`, false)},
          ${keyChargeCte(p)}
     select 1`,
);

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

const SETTLE = statement("billing-settle-hold", (p) => `with ${releaseCte(p)} select exists (select 1 from held) as settled`);

/**
 * Settles a hold of its own (a fallback model's extra hold): credits back `release`, keeps the
 * rest. Tokens stay on the turn's main settle row. No-op when already settled.
 */
export async function settleHold(pool: pg.Pool, accountId: string, release: number, reference: string, tags: CallTags): Promise<void> {
  await pool.query(SETTLE.with({ accountId, release, reference, ...tags, inputTokens: 0, outputTokens: 0 }));
}

/** Hands back a hold whose call died with its process (nothing was produced or billed); false when already settled. */
export async function releaseUnsettledHold(pool: pg.Pool, accountId: string, reference: string): Promise<boolean> {
  return ((await pool.query(RELEASE_UNSETTLED.with({ accountId, reference }))).rowCount ?? 0) > 0;
}

/**
 * Reserves `hold` if the balance covers it (and `keyId`, when given, still exists, has not expired
 * and has room under its spend limit). `keyLimited`: refused for the key's spend limit alone.
 */
export async function placeHold(pool: pg.Pool, accountId: string, hold: number, reference: string, tags: CallTags): Promise<{ ok: boolean; keyLimited: boolean }> {
  const { rows } = await pool.query<HoldOutcome>(PLACE_HOLD.with({ accountId, hold, reference, ...tags }));
  const row = rows[0]!;
  if (!row.ok && row.key_held && tags.keyId) await undoKeyHold(pool, tags.keyId, hold);
  return { ok: row.ok, keyLimited: keyLimitRefused(row) };
}

/**
 * Charges what a call cost beyond its hold, only up to what the balance covers (the release
 * row, with the tokens, follows when the turn is saved). Returns what the call paid in all.
 */
export async function chargeBeyondHold(pool: pg.Pool, accountId: string, hold: number, cost: number, reference: string, tags: CallTags): Promise<number> {
  if (cost <= hold) return cost;
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<{ b: number }>(`select ${A.balanceMicros} as b from ${A.table} where ${A.id} = $1 for update`, [accountId]);
    // Never beyond the balance, nor beyond what the key's spend limit has left (the gateway absorbs the rest).
    const extra = Math.min(cost - hold, rows[0]?.b ?? 0, tags.keyId ? await keyRoomMicros(db, tags.keyId, tags.threadId, reference) : Infinity);
    if (extra > 0) await db.query(CHARGE.with({ accountId, extra, reference, ...tags }));
    return hold + extra;
  });
}
