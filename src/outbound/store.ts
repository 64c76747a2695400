import type pg from "pg";
import { sqlNames } from "../db/names.js";
import { A2aPushConfig, Delivery, DeliveryAttempt, Job, Trigger, TriggerCallbackSecret, type DeliveryKind, type DeliveryStatus, type JobStatus } from "../db/schema.js";
import { newId } from "../infra/ids.js";
import { AppError } from "../errors/app-error.js";

/** Every statement on `deliveries` and `delivery_attempts` (the outbound engine's tables). */

const D = sqlNames(Delivery);
const A = sqlNames(DeliveryAttempt);
const J = sqlNames(Job);
const T = sqlNames(Trigger);
const S = sqlNames(TriggerCallbackSecret);
const P = sqlNames(A2aPushConfig);

export const DELIVERIES_TABLE = D.table;

/**
 * A CTE fragment for a job's terminal transition: records its completion callback, in the same
 * statement (so the same transaction) as the transition, when the job's trigger has a callback
 * URL. Its `webhook-id` is derived from the job (`msg_<job id>`), so every cycle carries the same one. `source` is a CTE returning the updated jobs' `id, account_id, trigger_id, status` and
 * `before` (the status before the statement); only a change to done/failed is an event. The first
 * cycle's id is derived from the job (`dlv_<job id>`), so the event is recorded at most once.
 * PostgreSQL runs a data-modifying CTE whether or not the statement reads it.
 */
export function jobCallbackCte(source: string): string {
  return `job_callback as (insert into ${D.table} (${D.id}, ${D.account}, ${D.job}, ${D.trigger}, ${D.kind}, ${D.webhookId}, ${D.status}, ${D.createdAt})
     select 'dlv_' || s.id, s.account_id, s.id, s.trigger_id, 'job_callback', 'msg_' || s.id, 'pending', now()
       from ${source} s join ${T.table} t on t.${T.id} = s.trigger_id
      where s.status in ('done', 'failed') and s.status is distinct from s.before and t.${T.callbackUrl} is not null
     on conflict (${D.id}) do nothing)`;
}

/**
 * The push configs of a task (`a2a_push_config_ids`, a migration's function), read with a snapshot
 * taken when it is called, after the state change has locked the task's state row: a config whose
 * insert committed while the change waited for that lock is seen, though the statement's own
 * snapshot predates it. The config's insert takes the same lock (a2a/store.ts `insertPushConfig`),
 * so each config gets each state either from the change or from its own insert, never from neither.
 */
export const PUSH_CONFIG_IDS = "a2a_push_config_ids";

/** An A2A delivery per row of `rows` (columns `config_id`, `account_id`, `job_id`, `state`): `dlv_<config id>_<state>`, recorded at most once. */
function a2aPushInsert(name: string, rows: string): string {
  return `${name} as (insert into ${D.table} (${D.id}, ${D.account}, ${D.job}, ${D.kind}, ${D.webhookId}, ${D.target}, ${D.event}, ${D.status}, ${D.createdAt})
     select 'dlv_' || r.config_id || '_' || r.state, r.account_id, r.job_id, 'a2a_push', 'msg_' || r.config_id || '_' || r.state, r.config_id, r.state, 'pending', now()
       from (${rows}) r where r.state is not null
     on conflict (${D.id}) do nothing)`;
}

/**
 * The A2A push notifications of a task's state change, for each push config of the task, in the
 * statement that changes it (after its row lock: `PUSH_CONFIG_IDS`). `source` is a CTE returning
 * `id` (the task), `account_id`, `state` (an A2A state name, or null for no event) and `job_id` (or null).
 */
function a2aPushCte(name: string, source: string): string {
  return a2aPushInsert(name, `select c as config_id, s.account_id, s.job_id, s.state from ${source} s cross join lateral ${PUSH_CONFIG_IDS}(s.id) c where s.state is not null`);
}

/** A job's status as the A2A state its push reports (null: queued, no event); `j` has `status` and `error`. */
export const jobPushState = (j: string) => `case when ${j}.status = 'running' then 'working' when ${j}.status = 'done' then 'completed'
            when ${j}.status = 'failed' and ${j}.error = 'cancelled' then 'canceled' when ${j}.status = 'failed' then 'failed' end`;

/**
 * For a job's transition (`source` as for jobCallbackCte, plus `error`): the A2A task of the same
 * id notifies working, completed, failed or canceled (a job failed with "cancelled", jobs/control.ts).
 */
export function jobPushCte(source: string): string {
  return `job_push_state as (select s.id, s.account_id, s.id as job_id,
       case when s.status is not distinct from s.before then null else ${jobPushState("s")} end as state
       from ${source} s),
     ${a2aPushCte("job_push", "job_push_state")}`;
}

/** For a chat task's end (`source` returns the task's `id`, `account_id` and new `state`). */
export function chatTaskPushCte(source: string): string {
  return `chat_push_state as (select s.id, s.account_id, null::varchar as job_id, s.state from ${source} s),
     ${a2aPushCte("chat_push", "chat_push_state")}`;
}

/**
 * For a push config just inserted (`source` returns `config_id`, `account_id`, `job_id` and the
 * `state` its task is in, read under the task's state row lock): the event of that state, so a
 * config made after the task moved on still hears where it is (a no-op when the change recorded it).
 */
export function newPushConfigCte(source: string): string {
  return a2aPushInsert("config_push", `select config_id, account_id, job_id, state from ${source}`);
}

/** What one attempt of a delivery needs: where to, with which secrets, and the body (stored, or the job to build it from). */
export interface DeliveryRequestRow {
  id: string;
  kind: DeliveryKind;
  status: DeliveryStatus;
  webhookId: string;
  body: string | null;
  createdAt: Date;
  url: string | null;
  sealedSecrets: string[];
  jobId: string | null;
  triggerId: string | null;
  jobStatus: JobStatus | null;
  jobError: string | null;
  /** The job's result, or null when it is over the size limit (`resultTooLarge`). */
  jobResult: unknown;
  resultTooLarge: boolean;
  /** A2A push: the task, the state the event reports, the config's token and authentication. */
  taskId: string | null;
  event: string | null;
  pushToken: string | null;
  pushAuthentication: { scheme?: string; credentials?: string } | null;
}

export async function loadDeliveryRequest(db: pg.Pool, deliveryId: string, maxResultBytes: number): Promise<DeliveryRequestRow | undefined> {
  const { rows } = await db.query<DeliveryRequestRow>(
    `select d.${D.id} as id, d.${D.kind} as kind, d.${D.status} as status, d.${D.webhookId} as "webhookId", d.${D.body} as body,
            d.${D.createdAt} as "createdAt", case when d.${D.kind} = 'a2a_push' then c.${P.url} else t.${T.callbackUrl} end as url,
            d.${D.job} as "jobId", d.${D.trigger} as "triggerId", c.${P.task} as "taskId", d.${D.event} as event,
            c.${P.token} as "pushToken", c.${P.authentication} as "pushAuthentication",
            coalesce((select array_agg(s.${S.sealedSecret} order by s.${S.expiresAt} desc nulls first) from ${S.table} s
                       where s.${S.trigger} = d.${D.trigger} and (s.${S.expiresAt} is null or s.${S.expiresAt} > now())), '{}') as "sealedSecrets",
            j.${J.status} as "jobStatus", j.${J.error} as "jobError",
            case when octet_length(j.${J.result}::text) > $2 then null else j.${J.result} end as "jobResult",
            coalesce(octet_length(j.${J.result}::text) > $2, false) as "resultTooLarge"
       from ${D.table} d
       left join ${T.table} t on t.${T.id} = d.${D.trigger}
       left join ${J.table} j on j.${J.id} = d.${D.job}
       left join ${P.table} c on c.${P.id} = d.${D.target}
      where d.${D.id} = $1`,
    [deliveryId, maxResultBytes],
  );
  return rows[0];
}

/** Fixes the body the first attempt built, so every later attempt and redelivery sends the same bytes. */
export async function keepBody(db: pg.Pool, deliveryId: string, body: string): Promise<void> {
  await db.query(`update ${D.table} set ${D.body} = $2 where ${D.id} = $1 and ${D.body} is null`, [deliveryId, body]);
}

export interface AttemptRecord {
  attempt: number;
  at: Date;
  url: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBytes: number;
  responseExcerpt: string | null;
}

/**
 * Records an attempt and, when it settles the delivery (`outcome`), the delivery's end, in one
 * statement. An attempt repeated after a worker crash overwrites its own row.
 */
export async function recordAttempt(db: pg.Pool, deliveryId: string, a: AttemptRecord, outcome: DeliveryStatus): Promise<void> {
  await db.query(
    `with a as (insert into ${A.table} (${A.delivery}, ${A.attempt}, ${A.at}, ${A.url}, ${A.statusCode}, ${A.durationMs}, ${A.error}, ${A.responseBytes}, ${A.responseExcerpt})
                values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                on conflict (${A.delivery}, ${A.attempt}) do update set ${A.at} = excluded.${A.at}, ${A.url} = excluded.${A.url},
                  ${A.statusCode} = excluded.${A.statusCode}, ${A.durationMs} = excluded.${A.durationMs}, ${A.error} = excluded.${A.error},
                  ${A.responseBytes} = excluded.${A.responseBytes}, ${A.responseExcerpt} = excluded.${A.responseExcerpt})
     update ${D.table} set ${D.status} = $10, ${D.finishedAt} = case when $10 = 'pending' then null else now() end
      where ${D.id} = $1 and ${D.status} = 'pending'`,
    [deliveryId, a.attempt, a.at, a.url, a.statusCode, a.durationMs, a.error, a.responseBytes, a.responseExcerpt, outcome],
  );
}

/** One attempt as the delivery log shows it: the attempt, with its delivery. */
export interface DeliveryLogRow extends AttemptRecord {
  deliveryId: string;
  kind: DeliveryKind;
  webhookId: string;
  deliveryStatus: DeliveryStatus;
}

const LOG_COLUMNS = `d.${D.id} as "deliveryId", d.${D.kind} as kind, d.${D.webhookId} as "webhookId", d.${D.status} as "deliveryStatus",
  a.${A.attempt} as attempt, a.${A.at} as at, a.${A.url} as url, a.${A.statusCode} as "statusCode", a.${A.durationMs} as "durationMs",
  a.${A.error} as error, a.${A.responseBytes} as "responseBytes", a.${A.responseExcerpt} as "responseExcerpt"`;

/** Every attempt of every delivery of a job of the account, oldest first. */
export async function jobDeliveryLog(db: pg.Pool, accountId: string, jobId: string): Promise<DeliveryLogRow[]> {
  const { rows } = await db.query<DeliveryLogRow>(
    `select ${LOG_COLUMNS} from ${D.table} d join ${A.table} a on a.${A.delivery} = d.${D.id}
      where d.${D.job} = $1 and d.${D.account} = $2 order by a.${A.at}, a.${A.attempt} limit 500`,
    [jobId, accountId],
  );
  return rows;
}

/** The attempts of one delivery (a test event's), oldest first. */
export async function deliveryLog(db: pg.Pool, accountId: string, deliveryId: string): Promise<DeliveryLogRow[]> {
  const { rows } = await db.query<DeliveryLogRow>(
    `select ${LOG_COLUMNS} from ${D.table} d join ${A.table} a on a.${A.delivery} = d.${D.id}
      where d.${D.id} = $1 and d.${D.account} = $2 order by a.${A.attempt}`,
    [deliveryId, accountId],
  );
  return rows;
}

/**
 * A new delivery cycle of a finished job's completion event: the same `webhook-id` and body as
 * the first cycle (Svix keeps the message id on a resend), sent to the trigger's current callback
 * URL. Returns the new delivery's id.
 */
export async function insertRedelivery(db: pg.Pool, accountId: string, jobId: string): Promise<string> {
  const id = newId("dlv");
  const { rows } = await db.query<{ id: string | null; status: JobStatus; callbackUrl: string | null }>(
    `with job as (select j.${J.id} as id, j.${J.account} as account_id, j.${J.trigger} as trigger_id, j.${J.status} as status, t.${T.callbackUrl} as callback_url
                    from ${J.table} j left join ${T.table} t on t.${T.id} = j.${J.trigger} where j.${J.id} = $1 and j.${J.account} = $2),
          first as (select ${D.body} as body from ${D.table} where ${D.job} = $1 and ${D.kind} = 'job_callback' and ${D.body} is not null
                     order by ${D.createdAt} limit 1),
          ins as (insert into ${D.table} (${D.id}, ${D.account}, ${D.job}, ${D.trigger}, ${D.kind}, ${D.webhookId}, ${D.body}, ${D.status}, ${D.createdAt})
                  select $3, account_id, id, trigger_id, 'job_callback', 'msg_' || id, (select body from first), 'pending', now() from job
                   where status in ('done', 'failed') and callback_url is not null returning ${D.id})
     select (select ${D.id} from ins) as id, status, callback_url as "callbackUrl" from job`,
    [jobId, accountId, id],
  );
  const job = rows[0];
  if (!job) throw new AppError("not_found", `Job ${jobId} not found`, { param: "jobId" });
  if (job.id) return job.id;
  if (job.status !== "done" && job.status !== "failed") {
    throw new AppError("job_not_finished", `Job ${jobId} is ${job.status}: its completion event is sent when it ends`, { param: "jobId", details: { status: job.status.toUpperCase() } });
  }
  throw new AppError("validation_failed", `Job ${jobId}'s trigger has no callbackUrl: set one with updateTrigger first`, { param: "jobId" });
}

/** A trigger's test event (`sendTestCallback`), with its body fixed now. Returns the delivery's id. */
export async function insertTestDelivery(db: pg.Pool, accountId: string, triggerId: string, webhookId: string, payload: unknown): Promise<string> {
  const id = newId("dlv");
  await db.query(
    `insert into ${D.table} (${D.id}, ${D.account}, ${D.trigger}, ${D.kind}, ${D.webhookId}, ${D.body}, ${D.status}, ${D.createdAt})
     values ($1, $2, $3, 'test_callback', $4, $5, 'pending', now())`,
    [id, accountId, triggerId, webhookId, JSON.stringify(payload)],
  );
  return id;
}
