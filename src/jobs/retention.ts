import type pg from "pg";
import { AgentIdempotencyRecord, InputRequest } from "../db/schema.js";
import { sqlNames } from "../db/names.js";
import { purgeDeliveryBodiesCte } from "../outbound/store.js";

const R = sqlNames(AgentIdempotencyRecord);
const I = sqlNames(InputRequest);

/** What a purged run's error text becomes: the run still reads as failed, without what it said. */
export const PURGED = "[purged]";

/**
 * Retention (DESIGN §14): after the account's window, nothing of a webhook payload is left in
 * the database. A run keeps its status, timing, attempts, cost and tools used; what it received
 * and what it made of it goes: the audit entry's payload and result, the job's result, log and
 * error text (a script's message often quotes its input), its journal's step values (fetch
 * bodies, model answers, `ctx.step` results, `ctx.ask` answers), its input requests' prompts, schemas and answers and every message of the run's thread (where the
 * payload was sent to the model), and the stored bodies of its outbound deliveries (a completion
 * event carries the result, an A2A push the task with its input). A replay's
 * audit entry is dated like its original (replayJob copies the date), so both go together.
 * Idempotency records go 24 hours after their webhook.
 *
 * `asOf` is "now" for the whole pass (tests move it forward instead of waiting for the window).
 */
export async function purgeExpired(db: pg.Pool, asOf: Date): Promise<{ payloads: number; idempotencyRecords: number }> {
  const { rows } = await db.query<{ payloads: number }>(
    `with expired as (
       select e.id as audit_id, e.job_id from audit_entries e join accounts a on a.id = e.account_id
       where e.payload_purged_at is null and e.created_at < $1::timestamptz - make_interval(days => a.retention_days)
         and not exists (select 1 from jobs j where j.id = e.job_id and j.status in ('queued', 'running', 'input_required'))
     ),
     audits as (update audit_entries set payload = null, result = null, payload_purged_at = $1 where id in (select audit_id from expired) returning id),
     runs as (update jobs set result = null, logs = null, error = case when error is null then null else '${PURGED}' end
              where id in (select job_id from expired) returning thread_id),
     steps as (update job_steps set result = null where job_id in (select job_id from expired) and result is not null),
     inputs as (update ${I.table} set ${I.prompt} = '', ${I.schema} = null, ${I.answer} = null where ${I.job} in (select job_id from expired) and (${I.prompt} <> '' or ${I.schema} is not null or ${I.answer} is not null)),
     messages as (update messages set content = '', data = null where thread_id in (select thread_id from runs where thread_id is not null)),
     ${purgeDeliveryBodiesCte("bodies", "expired")}
     select count(*)::int as payloads from audits`,
    [asOf],
  );
  const idem = await db.query("delete from idempotency_records where expires_at <= $1", [asOf]);
  const byAgent = await db.query(`delete from ${R.table} where ${R.expiresAt} <= $1`, [asOf]);
  return { payloads: rows[0]?.payloads ?? 0, idempotencyRecords: (idem.rowCount ?? 0) + (byAgent.rowCount ?? 0) };
}
