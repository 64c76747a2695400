import type pg from "pg";
import { AppError } from "../errors/app-error.js";

/**
 * usage(from, to, groupBy) as sums of the ledger's call rows (docs/guides/graphql.md): every row a model call
 * wrote (its hold, the release of the unused part, an extra charge) carries the call's agent, key,
 * thread, trigger, job and model; the settling row also its tokens. Cost is what those rows took
 * from the balance, so the figures agree with the ledger to the micro-dollar by construction.
 * Whole hours are read from usage_rollups (the same sums, kept per account, agent, model and hour
 * as the rows are written), so a year's usage reads hours, not every call.
 */
export const USAGE_DIMENSIONS = {
  AGENT: { column: "agent_id", as: "agentId" },
  API_KEY: { column: "api_key_id", as: "apiKeyId" },
  THREAD: { column: "thread_id", as: "threadId" },
  TRIGGER: { column: "trigger_id", as: "triggerId" },
  MODEL: { column: "model", as: "model" },
  DAY: { column: "to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')", as: "day" },
} as const;
export type UsageDimensionName = keyof typeof USAGE_DIMENSIONS;

/** The ledger kinds a model call writes. */
export const CALL_KINDS = "('hold', 'hold_release', 'charge')";
export const MAX_USAGE_ROWS = 10_000;

export interface UsageRow {
  agentId: string | null;
  apiKeyId: string | null;
  threadId: string | null;
  triggerId: string | null;
  model: string | null;
  day: string | null;
  costMicros: number;
  requests: number;
  inputTokens: number;
  outputTokens: number;
}

/** The groupings the hourly rollup can answer (usage_rollups keeps agent, model and hour only). */
const ROLLUP_DIMENSIONS: ReadonlySet<UsageDimensionName> = new Set(["AGENT", "MODEL", "DAY"]);
const HOUR_MS = 3_600_000;

/**
 * The call rows to sum, as (agent_id, api_key_id, thread_id, trigger_id, model, created_at, cost,
 * requests, input_tokens, output_tokens). With `hours`, whole hours [hours.from, hours.to) come
 * from usage_rollups and only the partial hours at the range's ends from the ledger: the same rows
 * summed in two steps, so the totals are equal to the micro-dollar, and the ledger part is at most
 * two hours of rows.
 */
function callRows(hours: { from: Date; to: Date } | null): { sql: string; params: unknown[] } {
  const ledger = (lo: string, hi: string) =>
    `select agent_id, api_key_id, thread_id, trigger_id, model, created_at, -amount_micros as cost, (kind = 'hold')::int as requests, input_tokens, output_tokens
       from ledger_entries where account_id = $1 and kind in ${CALL_KINDS} and created_at >= ${lo} and created_at < ${hi}`;
  if (!hours) return { sql: ledger("$2", "$3"), params: [] };
  return {
    sql: `select nullif(agent_id, '') as agent_id, null::varchar as api_key_id, null::varchar as thread_id, null::varchar as trigger_id, nullif(model, '') as model, bucket as created_at, cost_micros as cost, requests, input_tokens, output_tokens
            from usage_rollups where account_id = $1 and bucket >= $4 and bucket < $5
          union all ${ledger("$2", "$4")}
          union all ${ledger("$5", "$3")}`,
    params: [hours.from, hours.to],
  };
}

export async function usage(db: pg.Pool, accountId: string, from: Date, to: Date, groupBy: UsageDimensionName[]): Promise<UsageRow[]> {
  if (!(from.getTime() < to.getTime())) throw new AppError("validation_failed", "from must be before to", { param: "from" });
  const names = [...new Set(groupBy)];
  const dims = names.map((d) => USAGE_DIMENSIONS[d]);
  const select = Object.values(USAGE_DIMENSIONS)
    .map((d) => (dims.includes(d) ? `${d.column} as "${d.as}"` : `null as "${d.as}"`))
    .join(", ");
  const group = dims.length ? `group by ${dims.map((d) => d.column).join(", ")}` : "";
  // Whole hours inside the range: from the rollup when the grouping allows (by key, thread or
  // trigger it does not: those read the ledger, as before).
  const first = new Date(Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS);
  const last = new Date(Math.floor(to.getTime() / HOUR_MS) * HOUR_MS);
  const useRollup = names.every((d) => ROLLUP_DIMENSIONS.has(d)) && first < last;
  const rows = callRows(useRollup ? { from: first, to: last } : null);
  // Sums of bigint are numeric: cast back (they stay far below 2^53 micro-USD).
  const result = await db.query<UsageRow>(
    `select ${select}, coalesce(sum(cost), 0)::bigint as "costMicros", coalesce(sum(requests), 0)::int as "requests",
            coalesce(sum(input_tokens), 0)::bigint as "inputTokens", coalesce(sum(output_tokens), 0)::bigint as "outputTokens"
     from (${rows.sql}) calls
     ${group} order by 1, 2, 3, 4, 5, 6 limit ${MAX_USAGE_ROWS + 1}`,
    [accountId, from, to, ...rows.params],
  );
  if (result.rows.length > MAX_USAGE_ROWS) {
    throw new AppError("validation_failed", `More than ${MAX_USAGE_ROWS} usage rows: narrow the time range or group by fewer dimensions`, { param: "groupBy" });
  }
  // Without any group, an empty range still answers one row of zeros.
  return result.rows;
}

/** What model calls cost in total, by thread or by job: minus the sum of their ledger rows. */
export async function spentBy(db: pg.Pool, accountId: string, by: "thread_id" | "job_id", id: string): Promise<number> {
  const { rows } = await db.query<{ cost: number }>(
    `select coalesce(-sum(amount_micros), 0)::bigint as cost from ledger_entries where ${by} = $1 and account_id = $2 and kind in ${CALL_KINDS}`,
    [id, accountId],
  );
  return rows[0]?.cost ?? 0;
}
