import type pg from "pg";
import { sqlNames } from "../db/names.js";
import { InputRequest, type InputRequestStatus, type JobStatus } from "../db/schema.js";
import { NOTIFY_STATUS } from "../jobs/store.js";
import { jobInputCallbackCte, jobPushCte } from "../outbound/store.js";
import type { InputState } from "../../workflows/contract.js";

/** Every statement on `input_requests` (docs/design/input-requests.md). Each transition of its job NOTIFYs in the same statement. */

const I = sqlNames(InputRequest);

export interface InputRequestRow {
  id: string;
  jobId: string;
  accountId: string;
  prompt: string;
  schema: unknown;
  status: InputRequestStatus;
  answer: unknown;
  tokenHash: string;
  expiresAt: Date;
  /** The job's status now. */
  jobStatus: JobStatus;
}

const COLUMNS = `r.${I.id} as id, r.${I.job} as "jobId", r.${I.account} as "accountId", r.${I.prompt} as prompt, r.${I.schema} as schema,
  r.${I.status} as status, r.${I.answer} as answer, r.${I.tokenHash} as "tokenHash", r.${I.expiresAt} as "expiresAt", j.status as "jobStatus"`;

/** The job's returned columns for NOTIFY_STATUS, after a change from `before`. */
const RETURNING = (before: string) => `returning id, account_id, agent_id, trigger_id, status, attempts, error, '${before}'::text as before`;

export interface NewAsk {
  id: string;
  jobId: string;
  accountId: string;
  stepKey: string;
  prompt: string;
  schema: unknown;
  tokenHash: string;
  timeoutSeconds: number;
}

/**
 * The ask at `stepKey` of a running job: recorded when new, and while it is pending the job
 * becomes `input_required` (its run slot free; NOTIFY; the `job.input_required` callback event) —
 * in one statement. Returns the request as it stands (a re-run finds it answered or timed out).
 */
export async function recordAsk(db: pg.Pool, a: NewAsk): Promise<Pick<InputRequestRow, "id" | "status" | "answer" | "expiresAt">> {
  const { rows } = await db.query<Pick<InputRequestRow, "id" | "status" | "answer" | "expiresAt">>(
    `with ins as (insert into ${I.table} (${I.id}, ${I.job}, ${I.account}, ${I.stepKey}, ${I.prompt}, ${I.schema}, ${I.status}, ${I.tokenHash}, ${I.expiresAt}, ${I.createdAt})
                  values ($1, $2, $3, $4, $5, $6::jsonb, 'pending', $7, now() + make_interval(secs => $8::float8), now())
                  on conflict (${I.job}, ${I.stepKey}) do nothing
                  returning ${I.id} as id, ${I.status} as status, ${I.answer} as answer, ${I.expiresAt} as "expiresAt"),
          cur as (select * from ins
                  union all
                  select ${I.id}, ${I.status}, ${I.answer}, ${I.expiresAt} from ${I.table} where ${I.job} = $2 and ${I.stepKey} = $4),
          u as (update jobs set status = 'input_required', waiting_for = null
                 where id = $2 and status = 'running' and exists (select 1 from cur where status = 'pending') ${RETURNING("running")}),
          n as (select ${NOTIFY_STATUS} from u),
          paused as (select u.id, u.account_id, u.trigger_id, c.id as request_id from u cross join cur c),
          ${jobInputCallbackCte("paused")},
          ${jobPushCte("u")}
     select id, status, answer, "expiresAt", (select count(*) from n)::int as notified from cur`,
    [a.id, a.jobId, a.accountId, a.stepKey, a.prompt, a.schema === null ? null : JSON.stringify(a.schema), a.tokenHash, a.timeoutSeconds],
  );
  return rows[0]!;
}

export async function requestById(db: pg.Pool, id: string): Promise<InputRequestRow | undefined> {
  const { rows } = await db.query<InputRequestRow>(`select ${COLUMNS} from ${I.table} r join jobs j on j.id = r.${I.job} where r.${I.id} = $1`, [id]);
  return rows[0];
}

/** The latest question of a job (the one it waits on, while `input_required`). */
export async function latestRequestOfJob(db: pg.Pool, jobId: string): Promise<InputRequestRow | undefined> {
  const { rows } = await db.query<InputRequestRow>(
    `select ${COLUMNS} from ${I.table} r join jobs j on j.id = r.${I.job} where r.${I.job} = $1 order by r.${I.createdAt} desc, r.${I.id} limit 1`,
    [jobId],
  );
  return rows[0];
}

/** The pending questions of these jobs (one each at most), for Job.inputRequest. */
export async function pendingRequestsOfJobs(db: pg.Pool, jobIds: string[]): Promise<InputRequestRow[]> {
  const { rows } = await db.query<InputRequestRow>(
    `select ${COLUMNS} from ${I.table} r join jobs j on j.id = r.${I.job} where r.${I.job} = any($1::text[]) and r.${I.status} = 'pending' and j.status = 'input_required'`,
    [jobIds],
  );
  return rows;
}

/**
 * The answer, recorded at most once: the row lock of the request's UPDATE serialises answerers
 * (and the workflow's expiry), and a second one re-checks `status = 'pending'` after the first
 * commits, so it changes nothing. The job goes back to `queued` (NOTIFY) in the same statement.
 * Returns the job's id when this call's answer won; undefined when another answer, the expiry or
 * the job's end came first.
 */
export async function recordAnswer(db: pg.Pool, requestId: string, value: unknown, via: string): Promise<string | undefined> {
  const { rows } = await db.query<{ jobId: string }>(
    `with r as (update ${I.table} q set ${I.status} = 'answered', ${I.answer} = $2::jsonb, ${I.answeredAt} = now(), ${I.answeredVia} = $3
                 where q.${I.id} = $1 and q.${I.status} = 'pending' and q.${I.expiresAt} > now()
                   and exists (select 1 from jobs j where j.id = q.${I.job} and j.status = 'input_required')
                 returning q.${I.job} as job_id),
          u as (update jobs set status = 'queued' where id = (select job_id from r) and status = 'input_required' ${RETURNING("input_required")}),
          n as (select ${NOTIFY_STATUS} from u)
     select job_id as "jobId", (select count(*) from n)::int as notified from r`,
    [requestId, JSON.stringify(value), via],
  );
  return rows[0]?.jobId;
}

/**
 * The workflow's check: where the question stands (`closed` once its job ended, e.g. cancelled).
 */
export async function inputState(db: pg.Pool, requestId: string): Promise<InputState> {
  const { rows } = await db.query<{ status: InputRequestStatus; jobStatus: JobStatus }>(
    `select r.${I.status} as status, j.status as "jobStatus" from ${I.table} r join jobs j on j.id = r.${I.job} where r.${I.id} = $1`,
    [requestId],
  );
  const r = rows[0];
  if (!r || r.jobStatus === "done" || r.jobStatus === "failed") return "closed";
  return r.status;
}

/**
 * At the expiry: the pending question times out and its job is queued again (the re-run delivers
 * input_timeout at that ask), in one statement; an answer that came first wins (the row lock).
 * Returns where the question stands afterwards.
 */
export async function expireRequest(db: pg.Pool, requestId: string): Promise<InputState> {
  const { rows } = await db.query<{ expired: boolean }>(
    `with r as (update ${I.table} set ${I.status} = 'timed_out' where ${I.id} = $1 and ${I.status} = 'pending' and ${I.expiresAt} <= now() returning ${I.job} as job_id),
          u as (update jobs set status = 'queued' where id = (select job_id from r) and status = 'input_required' ${RETURNING("input_required")}),
          n as (select ${NOTIFY_STATUS} from u)
     select exists (select 1 from r) as expired, (select count(*) from n)::int as notified`,
    [requestId],
  );
  if (rows[0]?.expired) return "timed_out";
  return inputState(db, requestId);
}
