import type pg from "pg";
import { AppError } from "../errors/app-error.js";

/**
 * usage(from, to, groupBy) straight from the ledger (DESIGN §14): every row a model call wrote
 * (its hold, the release of the unused part, an extra charge) carries the call's agent, key,
 * thread, trigger, job and model; the settling row also its tokens. Cost is what those rows took
 * from the balance, so the figures agree with the ledger to the micro-dollar by construction.
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

export async function usage(db: pg.Pool, accountId: string, from: Date, to: Date, groupBy: UsageDimensionName[]): Promise<UsageRow[]> {
  if (!(from.getTime() < to.getTime())) throw new AppError("validation_failed", "from must be before to", { param: "from" });
  const dims = [...new Set(groupBy)].map((d) => USAGE_DIMENSIONS[d]);
  const select = Object.values(USAGE_DIMENSIONS)
    .map((d) => (dims.includes(d) ? `${d.column} as "${d.as}"` : `null as "${d.as}"`))
    .join(", ");
  const group = dims.length ? `group by ${dims.map((d) => d.column).join(", ")}` : "";
  // Sums of bigint are numeric: cast back (they stay far below 2^53 micro-USD).
  const { rows } = await db.query<UsageRow>(
    `select ${select}, coalesce(-sum(amount_micros), 0)::bigint as "costMicros", (count(*) filter (where kind = 'hold'))::int as "requests",
            coalesce(sum(input_tokens), 0)::bigint as "inputTokens", coalesce(sum(output_tokens), 0)::bigint as "outputTokens"
     from ledger_entries where account_id = $1 and kind in ${CALL_KINDS} and created_at >= $2 and created_at < $3
     ${group} order by 1, 2, 3, 4, 5, 6 limit ${MAX_USAGE_ROWS + 1}`,
    [accountId, from, to],
  );
  if (rows.length > MAX_USAGE_ROWS) {
    throw new AppError("validation_failed", `More than ${MAX_USAGE_ROWS} usage rows: narrow the time range or group by fewer dimensions`, { param: "groupBy" });
  }
  // Without any group, an empty range still answers one row of zeros.
  return rows;
}

/** What model calls cost in total, by thread or by job: minus the sum of their ledger rows. */
export async function spentBy(db: pg.Pool, accountId: string, by: "thread_id" | "job_id", id: string): Promise<number> {
  const { rows } = await db.query<{ cost: number }>(
    `select coalesce(-sum(amount_micros), 0)::bigint as cost from ledger_entries where ${by} = $1 and account_id = $2 and kind in ${CALL_KINDS}`,
    [id, accountId],
  );
  return rows[0]?.cost ?? 0;
}
