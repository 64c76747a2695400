import type pg from "pg";
import { AgentIdempotencyRecord, AuditEntry, IdempotencyRecord, InputRequest, RetentionRun } from "../db/schema.js";
import { sqlNames } from "../db/names.js";
import { statement } from "../db/statement.js";
import { withTransaction } from "../db/tx.js";
import { purgeDeliveryBodiesCte } from "../outbound/store.js";

const E = sqlNames(AuditEntry);
const R = sqlNames(RetentionRun);
const Q = sqlNames(InputRequest);

/** What a purged run's error text becomes: the run still reads as failed, without what it said. */
export const PURGED = "[purged]";

/**
 * Retention (docs/guides/graphql.md): after the account's window, nothing of a webhook payload is left in
 * the database. A run keeps its status, timing, attempts, cost and tools used; what it received
 * and what it made of it goes: the audit entry's payload and result, the job's result, log and
 * error text (a script's message often quotes its input), its journal's step values (fetch
 * bodies, model answers, `ctx.step` results, `ctx.ask` answers), its input requests' prompts, schemas and answers and every message of the run's thread (where the
 * payload was sent to the model), and the stored bodies of its outbound deliveries (a completion
 * event carries the result, an A2A push the task with its input). A replay's
 * audit entry is dated like its original (replayJob copies the date), so both go together.
 * Idempotency records go 24 hours after their webhook.
 *
 * The purge goes in batches of at most `batchSize` audit entries (or idempotency records), one
 * transaction each: the oldest expired entries nobody else has locked (`skip locked`), so the
 * purge never waits for a request and a request waits at most for the one batch that holds a row
 * it wants. Each batch also adds its counts to the run's row (retention_runs), so a run that
 * stopped (a crash, a killed worker) says how far it got, and running it again goes on where it
 * stopped: a purged entry is no longer expired, nothing is purged twice.
 */
const PURGE_PAYLOADS = statement(
  "retention-purge-payloads",
  (p) => `with expired as (
       select e.${E.id} as audit_id, e.${E.job} as job_id from ${E.table} e join accounts a on a.id = e.${E.account}
       where e.${E.payloadPurgedAt} is null and e.${E.createdAt} < ${p("asOf")}::timestamptz - make_interval(days => a.retention_days)
         and not exists (select 1 from jobs j where j.id = e.${E.job} and j.status in ('queued', 'running', 'input_required'))
       order by e.${E.createdAt} limit ${p("limit")} for update of e skip locked
     ),
     audits as (update ${E.table} set ${E.payload} = null, ${E.result} = null, ${E.payloadPurgedAt} = ${p("asOf")} where ${E.id} in (select audit_id from expired) returning ${E.id}),
     runs as (update jobs set result = null, logs = null, error = case when error is null then null else '${PURGED}' end
              where id in (select job_id from expired) returning thread_id),
     steps as (update job_steps set result = null where job_id in (select job_id from expired) and result is not null),
     inputs as (update ${Q.table} set ${Q.prompt} = '', ${Q.schema} = null, ${Q.answer} = null where ${Q.job} in (select job_id from expired) and (${Q.prompt} <> '' or ${Q.schema} is not null or ${Q.answer} is not null)),
     messages as (update messages set content = '', data = null where thread_id in (select thread_id from runs where thread_id is not null)),
     ${purgeDeliveryBodiesCte("bodies", "expired")},
     progress as (update ${R.table} set ${R.batches} = ${R.batches} + 1, ${R.payloads} = ${R.payloads} + (select count(*) from audits), ${R.updatedAt} = now()
                  where ${R.id} = ${p("runId")})
     select count(*)::int as n from audits`,
);

/** The expired records of one idempotency table, a batch at a time (they only block a retried webhook's dedup). */
function purgeRecords(name: string, table: string, expiresAt: string) {
  return statement(
    name,
    (p) => `with gone as (delete from ${table} where ctid = any(array(select ctid from ${table} where ${expiresAt} <= ${p("asOf")} limit ${p("limit")} for update skip locked)) returning 1),
       progress as (update ${R.table} set ${R.batches} = ${R.batches} + 1, ${R.idempotencyRecords} = ${R.idempotencyRecords} + (select count(*) from gone), ${R.updatedAt} = now()
                    where ${R.id} = ${p("runId")})
       select count(*)::int as n from gone`,
  );
}
const I = sqlNames(IdempotencyRecord);
const AI = sqlNames(AgentIdempotencyRecord);
const PURGE_RECORDS = [purgeRecords("retention-purge-idempotency", I.table, I.expiresAt), purgeRecords("retention-purge-agent-idempotency", AI.table, AI.expiresAt)];

const START_RUN = statement(
  "retention-run-start",
  (p) => `insert into ${R.table} (${R.id}, ${R.asOf}, ${R.status}) values (${p("runId")}, ${p("asOf")}, 'running')
          on conflict (${R.id}) do update set ${R.status} = 'running', ${R.error} = null, ${R.updatedAt} = now() returning ${R.asOf} as "asOf"`,
);
const END_RUN = statement(
  "retention-run-end",
  (p) => `update ${R.table} set ${R.status} = ${p("status")}, ${R.error} = ${p("error")}, ${R.updatedAt} = now(), ${R.finishedAt} = now() where ${R.id} = ${p("runId")}
          returning ${R.payloads} as payloads, ${R.idempotencyRecords} as "idempotencyRecords"`,
);

export interface RetentionProgress {
  payloads: number;
  idempotencyRecords: number;
}

export interface RetentionOptions {
  batchSize: number;
  /** PostgreSQL cancels a batch that runs longer (statement_timeout): the attempt fails, a rerun goes on from there. */
  batchTimeoutMs?: number;
  /** Stops the run between batches (a worker shutting down, a cancelled activity, a test's crash). */
  signal?: AbortSignal;
  /** After each batch: what it purged (a heartbeat, the metrics). */
  onBatch?: (batch: RetentionProgress) => void;
}

const QUERY_CANCELED = "57014";

/** One batch, in its own transaction under `timeoutMs` when given. Returns how many rows it purged. */
async function purgeBatch(db: pg.Pool, query: pg.QueryConfig, timeoutMs: number | undefined): Promise<number> {
  if (!timeoutMs) return (await db.query<{ n: number }>(query)).rows[0]?.n ?? 0;
  return withTransaction(db, async (client) => {
    await client.query(`select set_config('statement_timeout', $1, true)`, [String(Math.ceil(timeoutMs))]);
    return (await client.query<{ n: number }>(query)).rows[0]?.n ?? 0;
  });
}

/**
 * Runs (or goes on with) the retention run `runId` as of `asOf` (a rerun keeps the first start's
 * `asOf`, so it purges exactly what the first would have). Returns what the whole run purged,
 * over every call that worked on it.
 */
export async function runRetention(db: pg.Pool, runId: string, asOf: Date, o: RetentionOptions): Promise<RetentionProgress> {
  const { rows } = await db.query<{ asOf: Date }>(START_RUN.with({ runId, asOf }));
  const at = rows[0]!.asOf;
  try {
    for (const [step, key] of [[PURGE_PAYLOADS, "payloads"], ...PURGE_RECORDS.map((s) => [s, "idempotencyRecords"] as const)] as const) {
      for (;;) {
        o.signal?.throwIfAborted();
        const n = await purgeBatch(db, step.with({ asOf: at, limit: o.batchSize, runId }), o.batchTimeoutMs);
        o.onBatch?.({ payloads: key === "payloads" ? n : 0, idempotencyRecords: key === "payloads" ? 0 : n });
        // A short batch: nothing more is expired, except rows locked right now (the next run takes them).
        if (n < o.batchSize) break;
      }
    }
  } catch (err) {
    // Stopped between batches: the run stays `running` (a rerun finishes it); a failing statement marks it failed.
    const timedOut = (err as { code?: string }).code === QUERY_CANCELED;
    const why = timedOut ? `A batch ran longer than ${o.batchTimeoutMs} ms and was cancelled (RETENTION_BATCH_TIMEOUT_SECONDS); running it again goes on from there` : String(err);
    if (!o.signal?.aborted) await db.query(END_RUN.with({ runId, status: "failed", error: why.slice(0, 1000) })).catch(() => {});
    throw timedOut ? new Error(why, { cause: err }) : err;
  }
  return (await db.query<RetentionProgress>(END_RUN.with({ runId, status: "done", error: null }))).rows[0]!;
}

export interface RetentionRunRow {
  id: string;
  asOf: Date;
  status: string;
  batches: number;
  payloads: number;
  idempotencyRecords: number;
  error: string | null;
  startedAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

const LIST_RUNS = statement(
  "retention-runs-list",
  (p) => `select ${R.id} as id, ${R.asOf} as "asOf", ${R.status} as status, ${R.batches} as batches, ${R.payloads} as payloads, ${R.idempotencyRecords} as "idempotencyRecords",
                 ${R.error} as error, ${R.startedAt} as "startedAt", ${R.updatedAt} as "updatedAt", ${R.finishedAt} as "finishedAt"
            from ${R.table} where (${p("id")}::text is null or ${R.id} = ${p("id")}) order by ${R.startedAt} desc, ${R.id} desc limit ${p("limit")}`,
);

/** The latest retention runs, newest first (or the one run `id`). */
export async function listRetentionRuns(db: pg.Pool, limit: number, id: string | null = null): Promise<RetentionRunRow[]> {
  return (await db.query<RetentionRunRow>(LIST_RUNS.with({ id, limit }))).rows;
}

/** Creates the run's row before it is started (the operator's mutation answers with it at once). */
export async function createRetentionRun(db: pg.Pool, runId: string, asOf: Date): Promise<void> {
  await db.query(START_RUN.with({ runId, asOf }));
}

/** A run that could not be started (Temporal refused it) is failed, not left running. */
export async function failRetentionRun(db: pg.Pool, runId: string, error: string): Promise<void> {
  await db.query(END_RUN.with({ runId, status: "failed", error: error.slice(0, 1000) }));
}
