import type pg from "pg";
import { withTransaction } from "../db/tx.js";
import { sqlNames } from "../db/names.js";
import { Account, ApiKey, LedgerEntry } from "../db/schema.js";
import { ASYNC_COMMIT_CTE, statement, type Param } from "../db/statement.js";
import { KEY_HELD_COLUMN, keyChargeCte, keyLimitRefused, keyRoomMicros, keyReclaimCte, keyReleaseBatchCte, keyReleaseCte, keySpendAllows, keySpendCtes, undoKeyHold, type HoldOutcome } from "./key-spend.js";

export { KEY_HELD_COLUMN, keyLimitRefused, undoKeyHold, type HoldOutcome } from "./key-spend.js";

/**
 * Hold-and-settle (docs/design/billing-reservations.md), the only SQL that moves an account's balance during a call. The
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
 * one more SQL condition the hold requires (the chat hot path: the rate-limit count). `amount`:
 * the hold as an SQL expression instead of the `hold` parameter (a continuation sizes it on the
 * history it reads in the same statement); `lockAfter`: see key-spend.ts `keySpendCtes`.
 */
export function holdCte(p: Param, condition?: string, o: { amount?: string; lockAfter?: string } = {}): string {
  const amount = o.amount ?? p("hold");
  // The key must still exist and not have expired; its spend limit (key-spend.ts) counts the hold
  // in the same statement, decided on the same locked balance.
  const keyUsable = `(${p("keyId")}::text is null or exists (select 1 from ${K.table} where ${K.id} = ${p("keyId")} and (${K.expiresAt} is null or ${K.expiresAt} > now())))`;
  return `${keySpendCtes(p, condition ? `${keyUsable} and ${condition}` : keyUsable, amount, o.lockAfter)},
          hold as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} - ${amount}
                 where ${A.id} = ${p("accountId")} and ${A.balanceMicros} >= ${amount} and exists (select 1 from hold_gate) and ${keySpendAllows}
                 returning ${A.id}),
          ${ledgerCte(p, "hold_ledger", "hold", "hold", `-${amount}::bigint`, false)}`;
}

/**
 * The `held` CTE (or `name`): one row when the call's hold (`reference`, on thread `threadId`) is
 * in the ledger and nothing released it yet, else none. Settling requires it: the hold commits
 * asynchronously, so a database crash between hold and settle may have lost it, and crediting back
 * a hold that was never debited would hand the account money. It also makes a second settle of one
 * hold a no-op. Read from the statement's snapshot: a settle that can race with a reclaim must also
 * hold the thread row (threads/store.ts `finishTurn`). Uses ledger_entries_thread_reference_idx.
 * Parameters: accountId, threadId, reference.
 */
export function heldCte(p: Param, name = "held"): string {
  const call = `${L.threadId} = ${p("threadId")} and ${L.reference} = ${p("reference")}`;
  return `${name} as (select 1 as held from ${L.table} where ${call} and ${L.account} = ${p("accountId")} and ${L.kind} = 'hold'
                   and not exists (select 1 from ${L.table} where ${call} and ${L.kind} = 'hold_release'))`;
}

/**
 * CTEs `held` (`held`, by default heldCte), `hold_release` and `hold_release_ledger`: credits back
 * `release` micro-USD of a hold that is still `held`. The ledger row is written even for 0: it is
 * the one row per call that settles it and carries its tokens. Parameters: accountId, release,
 * reference, the call's tags and tokens.
 */
export function releaseCte(p: Param, held = heldCte(p)): string {
  return `${held},
          hold_release as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} + ${p("release")}
                 where ${A.id} = ${p("accountId")} and ${p("release")}::bigint > 0 and exists (select 1 from held) returning ${A.id}),
          ${ledgerCte(p, "hold_release_ledger", "held", "hold_release", `${p("release")}::bigint`, true)},
          ${keyReleaseCte(p, `${p("release")}::bigint`, "exists (select 1 from hold_release)")}`;
}

/**
 * The batched settle of many calls of one account (threads/store.ts `finishTurns`): CTEs
 * `batch_release` (ONE update of the account row for the sum of the releases: the row is locked
 * once per batch, not once per call), `batch_release_ledger` (a `hold_release` row per call, with
 * its tags and tokens) and `batch_key_release`. `settled` is a CTE with, per call that may settle,
 * its columns thread_id, reference, release, agent_id, key_id, trigger_id, job_id, model,
 * input_tokens, output_tokens and held_at (when its hold was placed); the caller has proven each
 * hold is there and unsettled. Parameter: accountId.
 */
export function releaseBatchCte(p: Param, settled: string): string {
  return `batch_release as (update ${A.table} set ${A.balanceMicros} = ${A.balanceMicros} + (select sum(release) from ${settled})
                 where ${A.id} = ${p("accountId")} and (select sum(release) from ${settled}) > 0 returning ${A.id}),
          batch_release_ledger as (insert into ${L.table} (${L.account}, ${L.amountMicros}, ${L.kind}, ${L.reference}, ${L.agentId}, ${L.apiKeyId}, ${L.threadId}, ${L.triggerId}, ${L.jobId}, ${L.model}, ${L.inputTokens}, ${L.outputTokens}, ${L.createdAt})
                 select ${p("accountId")}, release, 'hold_release', reference, agent_id, key_id, thread_id, trigger_id, job_id, model, input_tokens, output_tokens, now() from ${settled}),
          ${keyReleaseBatchCte(settled, "batch_release")}`;
}

/**
 * CTEs `reclaimed` (one row per turn given by `dead` whose hold nothing settled: account, amount
 * and the hold's tags), `reclaim_credit` and `reclaim_ledger`: hands back the whole of each such
 * turn's hold and any extra charge it took (the turn never answered, so it costs nothing), with a
 * `hold_release` row on the hold's thread and reference, which heldCte then sees as settled.
 * A fallback model's extra holds (`<turn>~n`, chat/fallback.ts) are the turn's too, and the key's
 * spend row gives back what its holds took (`reclaim_key`), as a release would.
 * `dead` is a CTE of (thread_id, turn_id) rows the caller has locked (threads/store.ts), so no
 * finish of those turns can run concurrently; the caller clears their leases in the same statement.
 */
export function reclaimCte(dead: string): string {
  const same = (t: string) => `${t}.${L.threadId} = h.${L.threadId} and ${t}.${L.reference} = h.${L.reference}`;
  return `reclaimed as (select h.${L.account} as account, h.${L.reference} as reference, h.${L.agentId} as agent_id, h.${L.apiKeyId} as key_id, h.${L.threadId} as thread_id,
                  h.${L.triggerId} as trigger_id, h.${L.jobId} as job_id, h.${L.model} as model, h.${L.createdAt} as held_at,
                  -(h.${L.amountMicros} + coalesce((select sum(c.${L.amountMicros}) from ${L.table} c where ${same("c")} and c.${L.kind} = 'charge'), 0))::bigint as amount
             from ${dead} d join ${L.table} h on h.${L.threadId} = d.thread_id and h.${L.kind} = 'hold'
                  and (h.${L.reference} = d.turn_id or left(h.${L.reference}, length(d.turn_id) + 1) = d.turn_id || '~')
            where not exists (select 1 from ${L.table} r where ${same("r")} and r.${L.kind} = 'hold_release')),
          reclaim_credit as (update ${A.table} a set ${A.balanceMicros} = a.${A.balanceMicros} + s.amount
                 from (select account, sum(amount)::bigint as amount from reclaimed group by account) s where a.${A.id} = s.account returning a.${A.id}),
          reclaim_ledger as (insert into ${L.table} (${L.account}, ${L.amountMicros}, ${L.kind}, ${L.reference}, ${L.agentId}, ${L.apiKeyId}, ${L.threadId}, ${L.triggerId}, ${L.jobId}, ${L.model}, ${L.inputTokens}, ${L.outputTokens}, ${L.createdAt})
                 select account, amount, 'hold_release', reference, agent_id, key_id, thread_id, trigger_id, job_id, model, 0, 0, now() from reclaimed
                  where account in (select ${A.id} from reclaim_credit)),
          ${keyReclaimCte("reclaimed", "reclaim_credit")}`;
}

/**
 * CTE `settled_call`: the call `reference` on thread `threadId` as its finish settled it — one row
 * (model, tokens, what it cost in all) when a `hold_release` with the call's tokens exists, i.e.
 * the turn answered; none when it did not (yet). Parameters: threadId, reference.
 */
export function settledCallCte(p: Param): string {
  const call = `${L.threadId} = ${p("threadId")} and ${L.reference} = ${p("reference")}`;
  return `settled_call as (select r.${L.model} as model, r.${L.inputTokens} as input_tokens, r.${L.outputTokens} as output_tokens,
                  (select -sum(${L.amountMicros}) from ${L.table} where ${call})::bigint as cost
             from ${L.table} r where r.${L.threadId} = ${p("threadId")} and r.${L.reference} = ${p("reference")} and r.${L.kind} = 'hold_release'
              and r.${L.inputTokens} + r.${L.outputTokens} > 0 limit 1)`;
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

const SETTLE = statement("billing-settle-hold", (p) => `with ${releaseCte(p)} select exists (select 1 from held) as settled`);

/**
 * Settles a hold of its own (a fallback model's extra hold): credits back `release`, keeps the
 * rest. Tokens stay on the turn's main settle row. No-op when already settled.
 */
export async function settleHold(pool: pg.Pool, accountId: string, release: number, reference: string, tags: CallTags): Promise<void> {
  await pool.query(SETTLE.with({ accountId, release, reference, ...tags, inputTokens: 0, outputTokens: 0 }));
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
