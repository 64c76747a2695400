import type pg from "pg";
import { sqlNames } from "../db/names.js";
import { A2aPushConfig, A2aTask, AuditEntry, Delivery, DeliveryAttempt, Job, Trigger, TriggerCallbackSecret, type DeliveryKind, type DeliveryStatus, type JobStatus } from "../db/schema.js";
import { withTransaction } from "../db/tx.js";
import { newId } from "../infra/ids.js";
import { AppError } from "../errors/app-error.js";

/** Every statement on `deliveries` and `delivery_attempts` (the outbound engine's tables). */

const D = sqlNames(Delivery);
const A = sqlNames(DeliveryAttempt);
const J = sqlNames(Job);
const T = sqlNames(Trigger);
const S = sqlNames(TriggerCallbackSecret);
const P = sqlNames(A2aPushConfig);
const K = sqlNames(A2aTask);
const E = sqlNames(AuditEntry);

/** Serialises the slot claims of one account's attempts (pg_advisory_xact_lock's first key; jobs use 7301). */
const OUTBOUND_SLOT_LOCK = 7302;

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
 * A CTE fragment for a job that just paused on a question (`job.input_required`, docs/design/input-requests.md):
 * records the event in the same statement as the pause, when the job's trigger has a callback
 * URL. `source` returns the paused jobs' `id, account_id, trigger_id` and `request_id`; one event
 * per request (`dlv_<request id>`, `webhook-id` `msg_<request id>`), so a repeated pause records
 * nothing twice. Its body is built at each attempt from the request (it holds the answer URL,
 * whose token is never stored), by the builder the worker hands the engine.
 */
export function jobInputCallbackCte(source: string): string {
  return `job_input_callback as (insert into ${D.table} (${D.id}, ${D.account}, ${D.job}, ${D.trigger}, ${D.kind}, ${D.webhookId}, ${D.target}, ${D.status}, ${D.createdAt})
     select 'dlv_' || s.request_id, s.account_id, s.id, s.trigger_id, 'job_input', 'msg_' || s.request_id, s.request_id, 'pending', now()
       from ${source} s join ${T.table} t on t.${T.id} = s.trigger_id
      where t.${T.callbackUrl} is not null
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
export const jobPushState = (j: string) => `case when ${j}.status = 'running' then 'working' when ${j}.status = 'input_required' then 'input-required' when ${j}.status = 'done' then 'completed'
            when ${j}.status = 'failed' and ${j}.error = 'cancelled' then 'canceled' when ${j}.status = 'failed' then 'failed' end`;

/**
 * For a job's transition (`source` as for jobCallbackCte, plus `error`): the A2A task of the same
 * id notifies working, completed, failed or canceled (a job failed with "cancelled", jobs/control.ts).
 */
export function jobPushCte(source: string): string {
  return `job_push_state as (select s.id, s.account_id, s.id as job_id,
       case when s.status is not distinct from s.before then null else ${jobPushState("s")} end as state
       from ${source} s),
     ${a2aPushCte("job_push", "job_push_state")},
     ${jobTaskCte("job_push_state")}`;
}

/**
 * For a job's transition (`source` as job_push_state): the A2A task of the same id (a job an A2A
 * message started) takes the new state and the transition's time, which ListTasks filters and
 * orders by (a2a_tasks_agent_updated_idx). An upsert, because the task's record is written right
 * after its job commits (a2a/store.ts `insertJobTask`) and a transition may come first or
 * meanwhile: ON CONFLICT acts on the latest row whatever either statement's snapshot saw, so
 * neither write loses the other's. A row inserted here is a stub (context_id '') that the
 * record's insert completes; no read shows a stub.
 */
function jobTaskCte(source: string): string {
  return `job_task as (insert into ${K.table} as t (${K.id}, ${K.account}, ${K.agent}, ${K.contextId}, ${K.kind}, ${K.state}, ${K.request}, ${K.createdAt}, ${K.updatedAt})
     select s.id, s.account_id, j.${J.agent}, '', 'job', s.state, '{}'::jsonb, now(), now()
       from ${source} s join ${J.table} j on j.${J.id} = s.id and j.${J.source} = 'a2a'
      where s.state is not null
     on conflict (${K.id}) do update set ${K.state} = excluded.${K.state}, ${K.updatedAt} = excluded.${K.updatedAt})`;
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
  /** When the event happened: a job's completion event carries its first cycle's time on every redelivery. */
  eventAt: Date;
  url: string | null;
  sealedSecrets: string[];
  jobId: string | null;
  triggerId: string | null;
  /** A2A push: its config; job_input: its input request. */
  target: string | null;
  jobStatus: JobStatus | null;
  jobError: string | null;
  /** The job's result, or null when it is over the size limit (`resultTooLarge`). */
  jobResult: unknown;
  resultTooLarge: boolean;
  /** The retention policy purged the job's payload and result: its event can no longer be built. */
  jobPurged: boolean;
  /** A2A push: the task, the state the event reports, the config's token and authentication. */
  taskId: string | null;
  event: string | null;
  pushToken: string | null;
  pushAuthentication: { scheme?: string; credentials?: string } | null;
}

export async function loadDeliveryRequest(db: pg.Pool, deliveryId: string, maxResultBytes: number): Promise<DeliveryRequestRow | undefined> {
  const { rows } = await db.query<DeliveryRequestRow>(
    `select d.${D.id} as id, d.${D.kind} as kind, d.${D.status} as status, d.${D.webhookId} as "webhookId", d.${D.body} as body,
            d.${D.createdAt} as "createdAt",
            case when d.${D.kind} = 'job_callback'
                 then coalesce((select f.${D.createdAt} from ${D.table} f where f.${D.id} = 'dlv_' || d.${D.job}), d.${D.createdAt})
                 else d.${D.createdAt} end as "eventAt",
            exists (select 1 from ${E.table} e where e.${E.job} = d.${D.job} and e.${E.payloadPurgedAt} is not null) as "jobPurged",
            case when d.${D.kind} = 'a2a_push' then c.${P.url} else t.${T.callbackUrl} end as url,
            d.${D.job} as "jobId", d.${D.trigger} as "triggerId", d.${D.target} as target, c.${P.task} as "taskId", d.${D.event} as event,
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

/** Fixes the body the first attempt built, so every later attempt of the cycle sends the same bytes (until the retention purge). */
export async function keepBody(db: pg.Pool, deliveryId: string, body: string): Promise<void> {
  // Not after the retention purge: a body built from the job just before it must not outlive it.
  await db.query(
    `update ${D.table} d set ${D.body} = $2 where d.${D.id} = $1 and d.${D.body} is null
        and not exists (select 1 from ${E.table} e where e.${E.job} = d.${D.job} and e.${E.payloadPurgedAt} is not null)`,
    [deliveryId, body],
  );
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
 * statement; the attempt's account slot is free again. An attempt repeated after a worker crash
 * overwrites its own row.
 */
export async function recordAttempt(db: pg.Pool, deliveryId: string, a: AttemptRecord, outcome: DeliveryStatus): Promise<void> {
  await db.query(
    `with a as (insert into ${A.table} (${A.delivery}, ${A.attempt}, ${A.at}, ${A.url}, ${A.statusCode}, ${A.durationMs}, ${A.error}, ${A.responseBytes}, ${A.responseExcerpt})
                values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                on conflict (${A.delivery}, ${A.attempt}) do update set ${A.at} = excluded.${A.at}, ${A.url} = excluded.${A.url},
                  ${A.statusCode} = excluded.${A.statusCode}, ${A.durationMs} = excluded.${A.durationMs}, ${A.error} = excluded.${A.error},
                  ${A.responseBytes} = excluded.${A.responseBytes}, ${A.responseExcerpt} = excluded.${A.responseExcerpt})
     update ${D.table} set ${D.status} = case when ${D.status} = 'pending' then $10 else ${D.status} end,
            ${D.finishedAt} = case when ${D.status} <> 'pending' then ${D.finishedAt} when $10 = 'pending' then null else now() end,
            ${D.attemptLeaseUntil} = null
      where ${D.id} = $1`,
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
 * A new delivery cycle of a finished job's completion event: the same `webhook-id` as the first
 * cycle (Svix keeps the message id on a resend), its body built again from the job at the first
 * attempt (the same bytes while the job is kept; nothing of it is stored once the retention purge
 * ran), sent to the trigger's current callback URL. Refused when the job's result was purged, and
 * when `maxPending` cycles of the event are still pending (a job lock serialises the count).
 * Returns the new delivery's id.
 */
export async function insertRedelivery(pool: pg.Pool, accountId: string, jobId: string, maxPending: number): Promise<string> {
  return withTransaction(pool, async (db) => {
    // The lock first, then the reads in a statement of their own: its snapshot, taken after the lock, sees every insert before it.
    await db.query(`select 1 from ${J.table} where ${J.id} = $1 and ${J.account} = $2 for update`, [jobId, accountId]);
    const { rows } = await db.query<{ status: JobStatus; callbackUrl: string | null; purged: boolean; pending: number }>(
      `select j.${J.status} as status, t.${T.callbackUrl} as "callbackUrl",
              exists (select 1 from ${E.table} e where e.${E.job} = j.${J.id} and e.${E.payloadPurgedAt} is not null) as purged,
              (select count(*)::int from ${D.table} d where d.${D.job} = j.${J.id} and d.${D.kind} = 'job_callback' and d.${D.status} = 'pending') as pending
         from ${J.table} j left join ${T.table} t on t.${T.id} = j.${J.trigger}
        where j.${J.id} = $1 and j.${J.account} = $2`,
      [jobId, accountId],
    );
    const job = rows[0];
    if (!job) throw new AppError("not_found", `Job ${jobId} not found`, { param: "jobId" });
    if (job.status !== "done" && job.status !== "failed") {
      throw new AppError("job_not_finished", `Job ${jobId} is ${job.status}: its completion event is sent when it ends`, { param: "jobId", details: { status: job.status.toUpperCase() } });
    }
    if (!job.callbackUrl) throw new AppError("validation_failed", `Job ${jobId}'s trigger has no callbackUrl: set one with updateTrigger first`, { param: "jobId" });
    if (job.purged) {
      throw new AppError("validation_failed", `The result of job ${jobId} was purged by the retention policy, so its completion event cannot be sent again`, { param: "jobId" });
    }
    if (job.pending >= maxPending) {
      throw new AppError("rate_limit_exceeded", `Job ${jobId} already has ${job.pending} deliveries of its event pending (at most ${maxPending}): wait until they are delivered or failed`, {
        param: "jobId",
        details: { limit: maxPending },
      });
    }
    const id = newId("dlv");
    await db.query(
      `insert into ${D.table} (${D.id}, ${D.account}, ${D.job}, ${D.trigger}, ${D.kind}, ${D.webhookId}, ${D.status}, ${D.createdAt})
       select $3, ${J.account}, ${J.id}, ${J.trigger}, 'job_callback', 'msg_' || ${J.id}, 'pending', now() from ${J.table} where ${J.id} = $1 and ${J.account} = $2`,
      [jobId, accountId, id],
    );
    return id;
  });
}

/**
 * A trigger's test event (`sendTestCallback`), with its body fixed now; refused while `maxPending`
 * test events of the trigger are pending (a trigger lock serialises the count). Returns the delivery's id.
 */
export async function insertTestDelivery(pool: pg.Pool, accountId: string, triggerId: string, webhookId: string, payload: unknown, maxPending: number): Promise<string> {
  return withTransaction(pool, async (db) => {
    // The lock first, then the count in a statement of its own: its snapshot, taken after the lock, sees every insert before it.
    await db.query(`select 1 from ${T.table} where ${T.id} = $1 for update`, [triggerId]);
    const { rows } = await db.query<{ pending: number }>(
      `select count(*)::int as pending from ${D.table} where ${D.trigger} = $1 and ${D.kind} = 'test_callback' and ${D.status} = 'pending'`,
      [triggerId],
    );
    const pending = rows[0]?.pending ?? 0;
    if (pending >= maxPending) {
      throw new AppError("rate_limit_exceeded", `Trigger ${triggerId} already has ${pending} test events pending (at most ${maxPending}): wait until they are delivered or failed`, {
        param: "triggerId",
        details: { limit: maxPending },
      });
    }
    const id = newId("dlv");
    await db.query(
      `insert into ${D.table} (${D.id}, ${D.account}, ${D.trigger}, ${D.kind}, ${D.webhookId}, ${D.body}, ${D.status}, ${D.createdAt})
       values ($1, $2, $3, 'test_callback', $4, $5, 'pending', now())`,
      [id, accountId, triggerId, webhookId, JSON.stringify(payload)],
    );
    return id;
  });
}

/**
 * Retention: a CTE fragment that forgets the stored bodies of the deliveries of the jobs `source`
 * returns (`job_id`): a completion event carries the result, an A2A push the whole task with its
 * input. A delivery still pending then cannot rebuild it and fails (activities.ts).
 */
export function purgeDeliveryBodiesCte(name: string, source: string): string {
  return `${name} as (update ${D.table} set ${D.body} = null where ${D.job} in (select job_id from ${source}) and ${D.body} is not null)`;
}

/**
 * Takes one of the delivery's account's outbound slots for an attempt (until `leaseMs` from now at
 * the latest; recordAttempt frees it): `claimed` (or already held), `wait` (the account has
 * `limit` attempts in flight), or `over` (the delivery is no longer pending, or gone).
 */
export async function claimAttemptSlot(pool: pg.Pool, deliveryId: string, limit: number, leaseMs: number): Promise<"claimed" | "wait" | "over"> {
  return withTransaction(pool, async (db) => {
    await db.query(`select pg_advisory_xact_lock(${OUTBOUND_SLOT_LOCK}, hashtext(${D.account})) from ${D.table} where ${D.id} = $1`, [deliveryId]);
    const { rows } = await db.query<{ pending: boolean; claimed: boolean }>(
      `with u as (update ${D.table} d set ${D.attemptLeaseUntil} = now() + make_interval(secs => $3::float8 / 1000)
                   where d.${D.id} = $1 and d.${D.status} = 'pending'
                     and (d.${D.attemptLeaseUntil} > now()
                          or (select count(*) from ${D.table} o where o.${D.account} = d.${D.account} and o.${D.attemptLeaseUntil} > now()) < $2)
                  returning d.${D.id})
       select ${D.status} = 'pending' as pending, exists (select 1 from u) as claimed from ${D.table} where ${D.id} = $1`,
      [deliveryId, limit, leaseMs],
    );
    const r = rows[0];
    return !r?.pending ? "over" : r.claimed ? "claimed" : "wait";
  });
}

/** Pending deliveries started on Temporal whose last sign of life (the start, the latest attempt) is older than `idleMs`, oldest first. */
export async function idleDeliveries(db: pg.Pool, idleMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select d.${D.id} as id from ${D.table} d
      where d.${D.status} = 'pending' and d.${D.dispatchedAt} < now() - make_interval(secs => $1::float8 / 1000)
        and coalesce((select max(a.${A.at}) from ${A.table} a where a.${A.delivery} = d.${D.id}), d.${D.dispatchedAt}) < now() - make_interval(secs => $1::float8 / 1000)
      order by d.${D.dispatchedAt} limit $2`,
    [idleMs, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Ends a pending delivery that nothing will attempt again (its workflow is gone), failed, with
 * `why` recorded as one more attempt (to the last attempt's URL), so the delivery log shows it.
 */
export async function failAbandonedDelivery(db: pg.Pool, deliveryId: string, why: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `with d as (update ${D.table} set ${D.status} = 'failed', ${D.finishedAt} = now(), ${D.attemptLeaseUntil} = null
                 where ${D.id} = $1 and ${D.status} = 'pending' returning ${D.id})
     insert into ${A.table} (${A.delivery}, ${A.attempt}, ${A.at}, ${A.url}, ${A.statusCode}, ${A.durationMs}, ${A.error}, ${A.responseBytes})
     select d.${D.id}, coalesce((select max(a.${A.attempt}) from ${A.table} a where a.${A.delivery} = d.${D.id}), 0) + 1, now(),
            coalesce((select a.${A.url} from ${A.table} a where a.${A.delivery} = d.${D.id} order by a.${A.attempt} desc limit 1), ''), null::int, 0, $2::text, 0
       from d`,
    [deliveryId, why],
  );
  return (rowCount ?? 0) > 0;
}
