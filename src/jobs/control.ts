import type pg from "pg";
import { WorkflowNotFoundError } from "@temporalio/client";
import type { Runtime } from "../runtime/runtime.js";
import { AppError } from "../errors/app-error.js";
import { newId } from "../infra/ids.js";
import { jobCallbackCte, jobPushCte } from "../outbound/store.js";
import { getJob, JOB_COLUMNS, NOTIFY_STATUS, type JobRow } from "./store.js";

/** The error a cancelled job carries. */
export const CANCELLED = "cancelled";

/**
 * Marks a queued, running or waiting (input_required) job failed with `cancelled` (published, its completion callback
 * recorded), and marks it dispatched
 * so the dispatcher never starts a workflow for it. The caller then cancels the Temporal run.
 * A finished job answers job_finished; an unknown or foreign one not_found.
 */
export async function markCancelled(db: pg.Pool, accountId: string, jobId: string): Promise<JobRow> {
  const { rows } = await db.query<JobRow>(
    `with u as (update jobs set status = 'failed', error = '${CANCELLED}', finished_at = now(), started_at = coalesce(started_at, now()),
                  dispatched_at = coalesce(dispatched_at, now())
                where id = $1 and account_id = $2 and status in ('queued', 'running', 'input_required') returning *, 'running' as before),
          n as (select ${NOTIFY_STATUS} from u),
          ${jobCallbackCte("u")},
          ${jobPushCte("u")}
     select ${JOB_COLUMNS} from u, (select count(*) from n) as published`,
    [jobId, accountId],
  );
  if (rows[0]) return rows[0];
  const job = await getJob(db, jobId);
  if (!job || job.accountId !== accountId) throw new AppError("not_found", `Job ${jobId} not found`, { param: "id" });
  throw new AppError("job_finished", `Job ${jobId} is already ${job.status}`, { param: "id", details: { status: job.status.toUpperCase() } });
}

/**
 * Cancels a queued or running job of the account (the cancelJob mutation, A2A CancelTask): marked
 * failed with `cancelled`, then its Temporal run cancelled (its script stopped).
 */
export async function cancelJob(runtime: Runtime, accountId: string, jobId: string): Promise<JobRow> {
  const job = await markCancelled(runtime.pool, accountId, jobId);
  try {
    await runtime.temporal.client.workflow.getHandle(jobId).cancel();
  } catch (err) {
    // Not started yet: it never will be (the job is marked dispatched). Temporal down: the run
    // sees the failed job when it gets to run and stops there.
    if (!(err instanceof WorkflowNotFoundError)) runtime.log.warn({ err: String(err), jobId }, "could not cancel the workflow");
  }
  return job;
}

/**
 * A new queued job for the same agent and trigger with a copy of the original's payload (its own
 * audit entry, dated when the payload was received, so retention purges both copies together),
 * linked by `replay_of`. Published as QUEUED.
 */
export async function insertReplay(db: pg.Pool, accountId: string, jobId: string): Promise<JobRow> {
  const id = newId("job");
  const { rows } = await db.query<{ id: string }>(
    `with src as (select j.id, j.account_id, j.agent_id, j.trigger_id, e.payload, e.created_at as received_at from jobs j join audit_entries e on e.job_id = j.id
                  where j.id = $1 and j.account_id = $2 and e.payload is not null and e.payload_purged_at is null
                  order by e.created_at limit 1),
          j as (insert into jobs (id, account_id, agent_id, trigger_id, source, status, attempts, cost_micros, replay_of, created_at)
                select $3, account_id, agent_id, trigger_id, 'replay', 'queued', 0, 0, id, now() from src
                returning id, account_id, agent_id, trigger_id, status, error, attempts),
          a as (insert into audit_entries (id, account_id, job_id, kind, payload, cost_micros, created_at)
                select $4, account_id, $3, 'replay', payload, 0, received_at from src)
     select id, ${NOTIFY_STATUS} from j`,
    [jobId, accountId, id, newId("aud")],
  );
  if (rows[0]) return (await getJob(db, id))!;
  const job = await getJob(db, jobId);
  if (!job || job.accountId !== accountId) throw new AppError("not_found", `Job ${jobId} not found`, { param: "id" });
  throw new AppError("validation_failed", `The payload of job ${jobId} was purged by the retention policy, so it cannot be replayed`, { param: "id" });
}

export interface AuditRow {
  payload: unknown;
  payloadPurgedAt: Date | null;
  result: unknown;
  toolsUsed: unknown[] | null;
  costMicros: number;
}

export async function findAudit(db: pg.Pool, jobId: string): Promise<AuditRow | undefined> {
  const { rows } = await db.query<AuditRow>(
    `select payload, payload_purged_at as "payloadPurgedAt", result, tools_used as "toolsUsed", cost_micros as "costMicros"
     from audit_entries where job_id = $1 order by created_at limit 1`,
    [jobId],
  );
  return rows[0];
}
