import type pg from "pg";
import type { JobStatus } from "../db/schema.js";

/**
 * Channel carrying every job status transition (JSON `JobStatusNotice`). A NOTIFY payload is
 * limited to 8000 bytes, so it carries ids and small fields only, never the error text: a failed
 * transition with a long message would otherwise fail and leave the job `running` forever.
 */
export const JOB_STATUS = "job_status";

/** Stored error messages are cut to this many characters (the rest of a long message is dropped). */
export const MAX_ERROR_CHARS = 4000;

export interface JobStatusNotice {
  jobId: string;
  accountId: string;
  agentId: string;
  triggerId: string | null;
  status: JobStatus;
  attempts: number;
  at: string;
}

/** A transition as subscribers see it: the notice plus the error, read from the job when it failed. */
export interface JobStatusEvent extends JobStatusNotice {
  error: string | null;
}

export interface JobRow {
  id: string;
  accountId: string;
  agentId: string;
  triggerId: string | null;
  status: JobStatus;
  threadId: string | null;
  result: unknown;
  error: string | null;
  attempts: number;
  costMicros: number;
  logs: string[] | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  replayOf?: string | null;
}

export const JOB_COLUMNS = `id, account_id as "accountId", agent_id as "agentId", trigger_id as "triggerId", status,
  thread_id as "threadId", result, error, attempts, cost_micros as "costMicros", logs, created_at as "createdAt",
  started_at as "startedAt", finished_at as "finishedAt", replay_of as "replayOf"`;

export async function getJob(db: pg.Pool | pg.PoolClient, id: string): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>(`select ${JOB_COLUMNS} from jobs where id = $1`, [id]);
  return rows[0];
}

/**
 * The NOTIFY of a job's status, as a select-list expression over rows with the jobs columns id,
 * account_id, agent_id, trigger_id, status, attempts (every writer of a status uses it). No error
 * text: see JOB_STATUS.
 */
export const NOTIFY_STATUS = `pg_notify('${JOB_STATUS}', json_build_object('jobId', id, 'accountId', account_id, 'agentId', agent_id,
       'triggerId', trigger_id, 'status', status, 'attempts', attempts, 'at', now())::text)`;

/**
 * The current state, as status events, of every job that changed since `since`: what a listener
 * that lost its connection may have missed (rare, so a scan is acceptable).
 */
export async function jobEventsSince(db: pg.Pool, since: Date): Promise<JobStatusEvent[]> {
  const { rows } = await db.query<JobStatusEvent>(
    `select id as "jobId", account_id as "accountId", agent_id as "agentId", trigger_id as "triggerId", status, error, attempts,
            coalesce(finished_at, started_at, created_at) as at
       from jobs where coalesce(finished_at, started_at, created_at) >= $1 order by at limit 10000`,
    [since],
  );
  return rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
}

/**
 * Runs an UPDATE on one job and NOTIFYs the transition in the same statement, so an event is
 * published exactly when (and only if) the change commits. Only a change of status is an event:
 * marking a running job running again (a retried attempt) updates the row silently. (The
 * subquery in RETURNING sees the row as it was before this statement.)
 */
async function transition(db: pg.Pool, jobId: string, set: string, where: string, params: unknown[]): Promise<boolean> {
  const { rows } = await db.query(
    `with u as (update jobs set ${set} where id = $1 and ${where}
       returning id, account_id, agent_id, trigger_id, status, attempts, (select b.status from jobs b where b.id = $1) as before)
     select case when u.status is distinct from u.before then ${NOTIFY_STATUS} end from u`,
    [jobId, ...params],
  );
  return rows.length > 0;
}

/** Without `attempt` (the workflow's first step) the attempt count is left to the execution activity, which knows it. */
export function markRunning(db: pg.Pool, jobId: string, attempt = 0): Promise<boolean> {
  return transition(db, jobId, "status = 'running', started_at = coalesce(started_at, now()), attempts = greatest(attempts, $2)", "status in ('queued', 'running')", [attempt]);
}

/** What a run needs of its agent (script, egress allowlist, run limits). */
export interface AgentRow {
  script: string | null;
  egressAllow: string[] | null;
  cpuTimeLimitMs: number | null;
  wallTimeLimitMs: number | null;
}

export async function agentForRun(db: pg.Pool, agentId: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(
    `select script, egress_allow as "egressAllow", cpu_time_limit_ms as "cpuTimeLimitMs", wall_time_limit_ms as "wallTimeLimitMs" from agents where id = $1`,
    [agentId],
  );
  return rows[0];
}

export function markDone(db: pg.Pool, jobId: string): Promise<boolean> {
  return transition(db, jobId, "status = 'done', finished_at = now(), error = null", "status in ('queued', 'running')", []);
}

/**
 * An error message PostgreSQL will always accept: at most MAX_ERROR_CHARS characters, without NUL
 * (text columns refuse it) or lone surrogates (a cut through a pair becomes U+FFFD).
 */
export function storableError(message: string): string {
  return message.slice(0, MAX_ERROR_CHARS).replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

export function markFailed(db: pg.Pool, jobId: string, error: string): Promise<boolean> {
  return transition(db, jobId, "status = 'failed', finished_at = now(), error = $2, started_at = coalesce(started_at, now())", "status in ('queued', 'running')", [storableError(error)]);
}

export interface RunOutput {
  result: unknown;
  threadId: string | null;
  costMicros: number;
  logs: string[];
  modelCalls: unknown[];
  toolsUsed: unknown[];
}

/** Stores what a run produced (job + audit entry) before the job is marked done. */
export async function saveOutput(db: pg.Pool, jobId: string, out: RunOutput): Promise<void> {
  const result = JSON.stringify(out.result ?? null);
  await db.query(
    `with j as (update jobs set result = $2::jsonb, thread_id = $3, cost_micros = $4, logs = $5::jsonb where id = $1 returning id)
     update audit_entries set result = $2::jsonb, model_calls = $6::jsonb, tools_used = $7::jsonb, cost_micros = $4 where job_id = (select id from j)`,
    [jobId, result, out.threadId, out.costMicros, JSON.stringify(out.logs), JSON.stringify(out.modelCalls), JSON.stringify(out.toolsUsed)],
  );
}

/** Records logs, thread and cost of a failed run (the audit entry keeps the calls made). */
export async function saveFailureDetails(db: pg.Pool, jobId: string, out: Omit<RunOutput, "result">): Promise<void> {
  await db.query(
    `with j as (update jobs set thread_id = coalesce($2, thread_id), cost_micros = $3, logs = $4::jsonb where id = $1 returning id)
     update audit_entries set model_calls = $5::jsonb, tools_used = $6::jsonb, cost_micros = $3 where job_id = (select id from j)`,
    [jobId, out.threadId, out.costMicros, JSON.stringify(out.logs), JSON.stringify(out.modelCalls), JSON.stringify(out.toolsUsed)],
  );
}

/** The webhook payload of a job, from its audit entry. */
export async function jobPayload(db: pg.Pool, jobId: string): Promise<{ found: boolean; purged: boolean; payload: unknown }> {
  const { rows } = await db.query<{ payload: unknown; payload_purged_at: Date | null }>(
    "select payload, payload_purged_at from audit_entries where job_id = $1 order by created_at limit 1",
    [jobId],
  );
  if (!rows[0]) return { found: false, purged: false, payload: null };
  return { found: true, purged: rows[0].payload_purged_at !== null, payload: rows[0].payload };
}
