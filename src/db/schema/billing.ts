import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";
import { ApiKey } from "./keys.js";

/** The money trail: the ledger, its hourly rollups, and each limited key's spend per period (src/billing). */

/**
 * What a key with a spend limit has held and spent in one period (its UTC start; TOTAL: the
 * epoch). Moved only by the statements that move the balance (src/billing/key-spend.ts), so holds
 * count against it exactly as against the balance.
 */
export const ApiKeySpend = defineEntity({
  name: "ApiKeySpend",
  tableName: "api_key_spend",
  properties: {
    apiKey: () => p.manyToOne(ApiKey).deleteRule("cascade").primary(),
    periodStart: p.datetime().primary(),
    spentMicros: p.bigint("number").default(0),
  },
  primaryKeys: ["apiKey", "periodStart"],
});
export type IApiKeySpend = InferEntity<typeof ApiKeySpend>;

export const LEDGER_KINDS = ["top_up", "initial_balance", "hold", "hold_release", "charge", "refund"] as const;

export const LedgerEntry = defineEntity({
  name: "LedgerEntry",
  tableName: "ledger_entries",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    /** Signed: credits positive, debits negative. The balance equals the sum of this column. */
    amountMicros: p.bigint("number"),
    kind: p.enum(LEDGER_KINDS),
    /** What the entry is for: a chat completion id, a job id, an operator action. */
    reference: p.string().length(100).nullable(),
    // What a model call's rows were for (usage() groups by these). Plain ids, not foreign keys:
    // the money trail outlives deleted agents, keys and threads.
    agentId: p.string().nullable(),
    apiKeyId: p.string().nullable(),
    threadId: p.string().nullable(),
    triggerId: p.string().nullable(),
    jobId: p.string().nullable(),
    model: p.string().length(100).nullable(),
    /** On the row that settles a call (one per call): its tokens; 0 on the others. */
    inputTokens: p.integer().default(0),
    outputTokens: p.integer().default(0),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [
    { properties: ["account", "createdAt"] },
    { name: "ledger_entries_account_id_idx", properties: ["account", "id"] },
    // A thread's rows (per-thread cost), and one call's rows on it: the turn's finish checks its hold is still there (billing/ledger.ts heldCte).
    { name: "ledger_entries_thread_reference_idx", properties: ["threadId", "reference"], where: { threadId: { $ne: null } } },
    { name: "ledger_entries_job_idx", properties: ["jobId"], where: { jobId: { $ne: null } } },
  ],
});
export type ILedgerEntry = InferEntity<typeof LedgerEntry>;

/**
 * What model calls cost, per account, agent, model and UTC hour (billing/usage-rollup.ts): the
 * sums usage() would take over the ledger's call rows of that hour. Kept by a trigger on
 * ledger_entries in the inserting statement's own transaction, so it is never behind the ledger.
 * Agent and model are '' when the call rows had none (a unique key cannot hold nulls as equal).
 */
export const UsageRollup = defineEntity({
  name: "UsageRollup",
  tableName: "usage_rollups",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    /** The hour's start (UTC). */
    bucket: p.datetime(),
    agentId: p.string().default(""),
    model: p.string().length(100).default(""),
    costMicros: p.bigint("number").default(0),
    requests: p.bigint("number").default(0),
    inputTokens: p.bigint("number").default(0),
    outputTokens: p.bigint("number").default(0),
  },
  uniques: [{ name: "usage_rollups_key_unique", properties: ["account", "bucket", "agentId", "model"] }],
});
export type IUsageRollup = InferEntity<typeof UsageRollup>;
