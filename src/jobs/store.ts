import pg from "pg";
import type { JobSource, JobStatus } from "../db/schema.js";
import { storableText } from "../infra/text.js";
import { jobCallbackCte, jobPushCte } from "../outbound/store.js";

const { escapeLiteral } = pg;

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
  source: JobSource;
  /** The schedule that fired the job (source `schedule`); null otherwise. */
  scheduleId: string | null;
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
  /** Why a queued job is not running yet (set by beginRunRow; meaningful only while status is queued). */
  waitingFor?: WaitReason | null;
}

export const JOB_COLUMNS = `id, account_id as "accountId", agent_id as "agentId", trigger_id as "triggerId", status, source, schedule_id as "scheduleId",
  thread_id as "threadId", result, error, attempts, cost_micros as "costMicros", logs, created_at as "createdAt",
  started_at as "startedAt", finished_at as "finishedAt", replay_of as "replayOf", waiting_for as "waitingFor"`;

/** JOB_COLUMNS qualified with the alias `j` (for statements that join jobs with other tables). */
const JOB_COLUMNS_OF_J = JOB_COLUMNS.replace(/(^|,\s*)(\w+)/g, "$1j.$2");

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
 * that lost its connection may have missed. Its condition is the expression of jobs_changed_at_idx,
 * so it reads the jobs that changed, not the table.
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
 * published exactly when (and only if) the change commits; a change to done/failed records the
 * trigger's completion callback in it too, and any change its A2A task's push notifications (outbound/store.ts). Only a change of status is an event:
 * marking a running job running again (a retried attempt) updates the row silently. (The
 * subquery in RETURNING sees the row as it was before this statement.)
 */
async function transition(db: pg.Pool, jobId: string, set: string, where: string, params: unknown[]): Promise<boolean> {
  const { rows } = await db.query(
    `with u as (update jobs set ${set} where id = $1 and ${where}
       returning id, account_id, agent_id, trigger_id, status, attempts, error, (select b.status from jobs b where b.id = $1) as before),
     ${jobCallbackCte("u")},
     ${jobPushCte("u")}
     select case when u.status is distinct from u.before then ${NOTIFY_STATUS} end from u`,
    [jobId, ...params],
  );
  return rows.length > 0;
}

/** What a run needs of its agent (script, egress allowlist, run limits). */
export interface AgentRow {
  script: string | null;
  egressAllow: string[] | null;
  cpuTimeLimitMs: number | null;
  wallTimeLimitMs: number | null;
}

/** Advisory-lock class of "starting a run of this account" (the second key is the account id's hash). */
const RUN_START_LOCK = 7301;

/**
 * A run's concurrency limits (config.runConcurrency): a hard cap of runs executing at once per
 * account (null: the account's fair share of `slots`, see accountLimitSql) and per agent (null: none).
 */
export interface RunConcurrency {
  perAccount: number | null;
  perAgent: number | null;
  slots: number;
}

/** Why a queued job whose workflow has begun is not running yet (jobs.waiting_for, Job.waitingFor). */
export const WAIT_REASONS = ["account_run_limit", "agent_run_limit"] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/** The least fair share: what every account could run before the share existed, whatever the slots. */
export const MIN_FAIR_SHARE = 2;

const sqlInt = (v: number) => {
  if (!Number.isSafeInteger(v)) throw new Error(`run limit must be an integer, got ${v}`);
  return String(v);
};

/**
 * The most runs the account of the job row `j` may execute at once, as SQL. A fixed cap, or its
 * fair share: the slots divided among the accounts with runs executing or waiting (this one
 * included), rounded up and never below MIN_FAIR_SHARE — so a lone account uses every slot, and
 * once others come each gets its part as the lone account's runs end. The count reads only active
 * jobs (jobs_active_idx), so it is bounded by the work in flight.
 */
function accountLimitSql(limits: RunConcurrency, j: string): string {
  if (limits.perAccount !== null) return sqlInt(limits.perAccount);
  const others = `(select count(distinct r.account_id) from jobs r where r.status in ('queued', 'running')
                     and (r.status = 'running' or r.dispatched_at is not null) and r.account_id <> ${j}.account_id)`;
  return `greatest(${MIN_FAIR_SHARE}, ceil(${sqlInt(limits.slots)}::numeric / (1 + ${others})))`;
}

/**
 * The workflow's first step: the job marked running with its first attempt counted (so the
 * execution activity's first attempt writes nothing), and its agent's run limits — unless its
 * account (or agent) already has its limit of running jobs: then the job stays queued, records
 * why in waiting_for (`newWait` when that is new: a wait to count), `slotFree` is false, and the
 * workflow waits and asks again. Starts of one account are serialised by a transaction-scoped
 * advisory lock, so the count the statement sees (a fresh snapshot after the lock) includes every
 * start committed before; accounts never wait for each other.
 * Undefined when the job or its agent is gone.
 *
 * One round trip: the lock and the UPDATE are two statements of one simple-protocol query, which
 * PostgreSQL runs as one implicit transaction (the lock held until its commit) and, in READ
 * COMMITTED, each statement with a snapshot of its own, the UPDATE's taken after the lock — what
 * BEGIN, lock, UPDATE, COMMIT gave in four round trips (with a connection held across them). The
 * simple protocol takes no parameters: the id goes in as a quoted literal, the limits as integers.
 */
export async function beginRunRow(
  pool: pg.Pool,
  jobId: string,
  limits: RunConcurrency,
): Promise<(Pick<AgentRow, "cpuTimeLimitMs" | "wallTimeLimitMs"> & { slotFree: boolean; newWait: WaitReason | null }) | undefined> {
  const id = escapeLiteral(jobId);
  const agentLimit = limits.perAgent === null ? "null" : sqlInt(limits.perAgent);
  const results = (await pool.query(
    `select pg_advisory_xact_lock(${RUN_START_LOCK}, hashtext(account_id)) from jobs where id = ${id};
     with c as (select case when j.status <> 'queued' then null
                  when (select count(*) from jobs r where r.account_id = j.account_id and r.status = 'running') >= ${accountLimitSql(limits, "j")} then 'account_run_limit'
                  when (select count(*) from jobs r where r.account_id = j.account_id and r.agent_id = j.agent_id and r.status = 'running') >= ${agentLimit} then 'agent_run_limit'
                end as reason from jobs j where j.id = ${id}),
       u as (update jobs set status = 'running', started_at = coalesce(started_at, now()), attempts = greatest(attempts, 1), waiting_for = null
         where id = ${id} and (status = 'running' or (status = 'queued' and (select reason from c) is null))
         returning id, account_id, agent_id, trigger_id, status, attempts, error, (select b.status from jobs b where b.id = ${id}) as before),
       w as (update jobs set waiting_for = (select reason from c)
         where id = ${id} and status = 'queued' and (select reason from c) is not null and waiting_for is distinct from (select reason from c)
         returning waiting_for),
       n as (select case when u.status is distinct from u.before then ${NOTIFY_STATUS} end as sent from u),
       ${jobPushCte("u")}
       select a.cpu_time_limit_ms as "cpuTimeLimitMs", a.wall_time_limit_ms as "wallTimeLimitMs", (select count(*) from u)::int as began, j.status,
              (select count(*) from n)::int as notified, (select waiting_for from w) as "newWait"
         from jobs j join agents a on a.id = j.agent_id where j.id = ${id}`,
  )) as unknown as pg.QueryResult<Pick<AgentRow, "cpuTimeLimitMs" | "wallTimeLimitMs"> & { began: number; status: string; notified: number; newWait: WaitReason | null }>[];
  const r = results[1]?.rows[0];
  if (!r) return undefined;
  // A job already done or failed (replayed, cancelled) is not waiting for a slot: the run goes on and finds it finished.
  return { cpuTimeLimitMs: r.cpuTimeLimitMs, wallTimeLimitMs: r.wallTimeLimitMs, slotFree: r.began > 0 || r.status !== "queued", newWait: r.newWait };
}

/**
 * The oldest runs that wait for a slot (queued and already started in Temporal), at most `limit`
 * of `jobId`'s account, and with `otherAccounts` at most `limit` more of any account (under a fair
 * share, an account's run ending may grow the others' shares).
 */
export async function waitingRunsToWake(pool: pg.Pool, jobId: string, limit: number, otherAccounts: boolean): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `(select q.id from jobs j join jobs q on q.account_id = j.account_id and q.status = 'queued' and q.dispatched_at is not null and q.id <> j.id
       where j.id = $1 order by q.created_at, q.id limit $2)
     union
     (select q.id from jobs q where $3 and q.status = 'queued' and q.dispatched_at is not null and q.id <> $1 order by q.created_at, q.id limit $2)`,
    [jobId, limit, otherAccounts],
  );
  return rows.map((r) => r.id);
}

/** What an execution attempt reads before it runs: the job, its agent, its payload. */
export interface RunInput {
  job: JobRow;
  agent: AgentRow | undefined;
  payload: { found: boolean; purged: boolean; payload: unknown };
}

/**
 * An execution attempt's reads in one statement, and its attempt number recorded when it is a
 * new one (a retry): an attempt already counted (the first, by beginRunRow) writes nothing, so
 * this statement commits without a WAL flush. The job as returned is as it was before.
 */
export async function startAttempt(db: pg.Pool, jobId: string, attempt: number): Promise<RunInput | undefined> {
  const { rows } = await db.query<JobRow & { agentFound: boolean; script: string | null; egressAllow: string[] | null; cpuTimeLimitMs: number | null; wallTimeLimitMs: number | null; payloadFound: boolean; payload: unknown; payloadPurged: boolean; notified: number }>(
    `with u as (update jobs set status = 'running', started_at = coalesce(started_at, now()), attempts = greatest(attempts, $2::int)
       where id = $1 and status in ('queued', 'running') and (status = 'queued' or attempts < $2::int)
       returning id, account_id, agent_id, trigger_id, status, attempts, error, (select b.status from jobs b where b.id = $1) as before),
     n as (select case when u.status is distinct from u.before then ${NOTIFY_STATUS} end as sent from u),
     ${jobPushCte("u")}
     select ${JOB_COLUMNS_OF_J}, a.id is not null as "agentFound", a.script, a.egress_allow as "egressAllow",
            a.cpu_time_limit_ms as "cpuTimeLimitMs", a.wall_time_limit_ms as "wallTimeLimitMs",
            p.job_id is not null as "payloadFound", p.payload, p.payload_purged_at is not null as "payloadPurged", (select count(*) from n)::int as notified
       from jobs j
       left join agents a on a.id = j.agent_id
       left join lateral (select job_id, payload, payload_purged_at from audit_entries where job_id = j.id order by created_at limit 1) p on true
      where j.id = $1`,
    [jobId, attempt],
  );
  const r = rows[0];
  if (!r) return undefined;
  const { agentFound, script, egressAllow, cpuTimeLimitMs, wallTimeLimitMs, payloadFound, payload, payloadPurged, notified: _, ...job } = r;
  return {
    job,
    agent: agentFound ? { script, egressAllow, cpuTimeLimitMs, wallTimeLimitMs } : undefined,
    payload: { found: payloadFound, purged: payloadPurged, payload: payloadFound ? payload : null },
  };
}

export function markDone(db: pg.Pool, jobId: string): Promise<boolean> {
  return transition(db, jobId, "status = 'done', finished_at = now(), error = null", "status in ('queued', 'running', 'input_required')", []);
}

/**
 * An error message PostgreSQL will always accept: at most MAX_ERROR_CHARS characters, without NUL
 * (text columns refuse it) or lone surrogates (a cut through a pair becomes U+FFFD).
 */
export function storableError(message: string): string {
  return storableText(message.slice(0, MAX_ERROR_CHARS));
}

export function markFailed(db: pg.Pool, jobId: string, error: string): Promise<boolean> {
  return transition(db, jobId, "status = 'failed', finished_at = now(), error = $2, started_at = coalesce(started_at, now())", "status in ('queued', 'running', 'input_required')", [storableError(error)]);
}

export interface RunOutput {
  result: unknown;
  threadId: string | null;
  costMicros: number;
  logs: string[];
  modelCalls: unknown[];
  toolsUsed: unknown[];
}

/**
 * Stores what a run produced (job + audit entry) and marks the job done, in one statement: the
 * output and the status commit together (the workflow then has nothing left to write), with the
 * completion callback when the trigger has one. A job that
 * is no longer queued/running (cancelled meanwhile) keeps its status. Returns whether it is done.
 */
export async function saveOutputAndMarkDone(db: pg.Pool, jobId: string, out: RunOutput): Promise<boolean> {
  const result = JSON.stringify(out.result ?? null);
  const { rows } = await db.query<{ status: JobStatus }>(
    `with j as (update jobs set result = $2::jsonb, thread_id = $3, cost_micros = $4, logs = $5::jsonb,
         status = case when status in ('queued', 'running') then 'done' else status end,
         finished_at = case when status in ('queued', 'running') then now() else finished_at end,
         error = case when status in ('queued', 'running') then null else error end
       where id = $1
       returning id, account_id, agent_id, trigger_id, status, attempts, error, (select b.status from jobs b where b.id = $1) as before),
     a as (update audit_entries set result = $2::jsonb, model_calls = $6::jsonb, tools_used = $7::jsonb, cost_micros = $4 where job_id = (select id from j)),
     ${jobCallbackCte("j")},
     ${jobPushCte("j")}
     select status, case when status is distinct from before then ${NOTIFY_STATUS} end from j`,
    [jobId, result, out.threadId, out.costMicros, JSON.stringify(out.logs), JSON.stringify(out.modelCalls), JSON.stringify(out.toolsUsed)],
  );
  return rows[0]?.status === "done";
}

/** Records logs, thread and cost of a failed run (the audit entry keeps the calls made). */
export async function saveFailureDetails(db: pg.Pool, jobId: string, out: Omit<RunOutput, "result">): Promise<void> {
  await db.query(
    `with j as (update jobs set thread_id = coalesce($2, thread_id), cost_micros = $3, logs = $4::jsonb where id = $1 returning id)
     update audit_entries set model_calls = $5::jsonb, tools_used = $6::jsonb, cost_micros = $3 where job_id = (select id from j)`,
    [jobId, out.threadId, out.costMicros, JSON.stringify(out.logs), JSON.stringify(out.modelCalls), JSON.stringify(out.toolsUsed)],
  );
}
