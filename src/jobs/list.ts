import type pg from "pg";
import { CREATED_CURSOR, createdBefore, createdCursorColumn, decodeCursor, toConnection, type Connection } from "../graphql/connection.js";
import { JOB_COLUMNS, type JobRow } from "./store.js";
import type { JobStatus } from "../db/schema.js";

export interface JobListFilter {
  status?: JobStatus | null;
  triggerId?: string | null;
  agentId?: string | null;
  scheduleId?: string | null;
  createdAfter?: Date | null;
  createdBefore?: Date | null;
}

/**
 * One page of an account's jobs, newest first (created_at desc, id desc), read by keyset on the
 * jobs_account_created / jobs_account_status_created indexes. Every filter is a bound parameter.
 */
export async function listJobs(db: pg.Pool, accountId: string, filter: JobListFilter, first: number, after: string | null | undefined): Promise<Connection<JobRow>> {
  const cursor = decodeCursor(after, CREATED_CURSOR);
  const where = ["account_id = $1"];
  const params: unknown[] = [accountId];
  const add = (sql: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(sql(params.length));
  };
  if (filter.status) add((n) => `status = $${n}`, filter.status);
  if (filter.triggerId) add((n) => `trigger_id = $${n}`, filter.triggerId);
  if (filter.agentId) add((n) => `agent_id = $${n}`, filter.agentId);
  if (filter.scheduleId) add((n) => `schedule_id = $${n}`, filter.scheduleId);
  if (filter.createdAfter) add((n) => `created_at >= $${n}`, filter.createdAfter);
  if (filter.createdBefore) add((n) => `created_at < $${n}`, filter.createdBefore);
  if (cursor) {
    params.push(cursor[0], cursor[1]);
    where.push(createdBefore("jobs", params.length - 1, params.length));
  }
  params.push(first + 1);
  const { rows } = await db.query<JobRow & { cursorUs: number }>(
    `select ${JOB_COLUMNS}, ${createdCursorColumn("jobs")}
     from jobs where ${where.join(" and ")} order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  return toConnection(rows, first, (r) => [r.cursorUs, r.id], ({ cursorUs: _c, ...job }) => job);
}
