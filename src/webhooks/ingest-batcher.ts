import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { newId } from "../infra/ids.js";
import { NOTIFY_STATUS } from "../jobs/store.js";
import { AgentIdempotencyRecord, type JobSource } from "../db/schema.js";
import { sqlNames } from "../db/names.js";

/**
 * Group commit for job ingest (webhooks, and jobs started without a trigger: A2A, MCP). Each accepted webhook needs a job, its audit entry and (with
 * a key) an idempotency record, durable before the 202. Instead of one transaction per request,
 * concurrent requests are gathered while earlier batches are in flight and written by ONE
 * statement (data-modifying CTEs are atomic, and foreign keys are checked at its end). Every
 * caller's promise resolves only after its batch has committed.
 */

export interface IngestItem {
  /** Null for a job started without a trigger: its idempotency key is scoped per agent and source. */
  triggerId: string | null;
  accountId: string;
  agentId: string;
  /** What started the job (`jobs.source`; also the audit entry's kind). */
  source: JobSource;
  idempotencyKey: string | null;
  /** The raw JSON body, already parsed once to prove it is JSON. */
  payloadText: string;
  /** W3C traceparent of the request (tracing on only): the dispatcher's start continues that trace. */
  traceContext?: string | null;
}

export interface IngestResult {
  jobId: string;
  /** False when an idempotency key matched an earlier job. */
  created: boolean;
}

type Outcome = { ok: true; result: IngestResult } | { ok: false; error: unknown };

interface Pending {
  item: IngestItem;
  resolve: (r: IngestResult) => void;
  reject: (e: unknown) => void;
}

const R = sqlNames(AgentIdempotencyRecord);

const INSERT_BATCH = `
with input as (
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
    as t(job_id, trigger_id, account_id, agent_id, idem_key, payload, audit_id, trace_context, source)
),
claimed as (
  insert into idempotency_records (trigger_id, key, job_id, expires_at, created_at)
  select trigger_id, idem_key, job_id, now() + interval '24 hours', now() from input where idem_key is not null and trigger_id is not null
  on conflict (trigger_id, key) do update
    set job_id = excluded.job_id, expires_at = excluded.expires_at, created_at = excluded.created_at
    where idempotency_records.expires_at <= now()
  returning job_id
),
claimed_by_agent as (
  insert into ${R.table} (${R.agent}, ${R.source}, ${R.key}, ${R.job}, ${R.expiresAt}, ${R.createdAt})
  select agent_id, source, idem_key, job_id, now() + interval '24 hours', now() from input where idem_key is not null and trigger_id is null
  on conflict (${R.agent}, ${R.source}, ${R.key}) do update
    set ${R.job} = excluded.${R.job}, ${R.expiresAt} = excluded.${R.expiresAt}, ${R.createdAt} = excluded.${R.createdAt}
    where ${R.table}.${R.expiresAt} <= now()
  returning ${R.job} as job_id
),
winners as (
  select i.* from input i where i.idem_key is null or i.job_id in (select job_id from claimed union all select job_id from claimed_by_agent)
),
j as (
  insert into jobs (id, account_id, agent_id, trigger_id, source, status, attempts, cost_micros, created_at, trace_context)
  select job_id, account_id, agent_id, trigger_id, source, 'queued', 0, 0, now(), trace_context from winners
  returning id, account_id, agent_id, trigger_id, status, error, attempts
),
a as (
  insert into audit_entries (id, account_id, job_id, kind, payload, cost_micros, created_at)
  select audit_id, account_id, job_id, source, payload::jsonb, 0, now() from winners
  returning id
)
-- Subscribers hear QUEUED exactly when the job commits (the same NOTIFY the later transitions use).
select id as job_id, ${NOTIFY_STATUS} from j`;

/** Where an idempotency key is unique: per trigger, or per agent and source for jobs without one. */
const keyScope = (i: Pick<IngestItem, "triggerId" | "agentId" | "source">) => (i.triggerId !== null ? `t\u0000${i.triggerId}` : `a\u0000${i.agentId}\u0000${i.source}`);

export interface IngestOptions {
  /** Transactions allowed in flight at once; more requests wait and join the next batch. */
  maxInFlight?: number;
  maxBatch?: number;
  maxBatchBytes?: number;
}

export class IngestBatcher {
  private pending: Pending[] = [];
  private pendingBytes = 0;
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;

  constructor(
    private readonly pool: pg.Pool,
    /** Called with the ids of newly created jobs (and their trace contexts) once their batch is committed. */
    private readonly onCommitted: (jobIds: string[], traceContexts: (string | null)[]) => void,
    options: IngestOptions = {},
  ) {
    this.maxInFlight = options.maxInFlight ?? 4;
    this.maxBatch = options.maxBatch ?? 256;
    this.maxBatchBytes = options.maxBatchBytes ?? 8 * 1024 * 1024;
  }

  submit(item: IngestItem): Promise<IngestResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.pendingBytes += item.payloadText.length;
      this.pump();
    });
  }

  private pump(): void {
    while (this.pending.length > 0 && this.inFlight < this.maxInFlight) {
      const batch: Pending[] = [];
      let bytes = 0;
      while (this.pending.length > 0 && batch.length < this.maxBatch && (batch.length === 0 || bytes + this.pending[0]!.item.payloadText.length <= this.maxBatchBytes)) {
        const p = this.pending.shift()!;
        bytes += p.item.payloadText.length;
        batch.push(p);
      }
      this.pendingBytes -= bytes;
      this.inFlight++;
      this.flush(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async flush(batch: Pending[]): Promise<void> {
    // Same trigger + key twice in one batch: only the first is written, the rest share its answer.
    const leaders = new Map<string, Pending[]>();
    const unique: Pending[] = [];
    for (const p of batch) {
      if (p.item.idempotencyKey === null) {
        unique.push(p);
        continue;
      }
      const k = `${keyScope(p.item)}\u0000${p.item.idempotencyKey}`;
      const group = leaders.get(k);
      if (group) group.push(p);
      else {
        leaders.set(k, []);
        unique.push(p);
      }
    }
    const settle = (p: Pending, outcome: Outcome) => {
      const followers = p.item.idempotencyKey === null ? [] : (leaders.get(`${keyScope(p.item)}\u0000${p.item.idempotencyKey}`) ?? []);
      if (outcome.ok) {
        p.resolve(outcome.result);
        for (const f of followers) f.resolve({ jobId: outcome.result.jobId, created: false });
      } else {
        p.reject(outcome.error);
        for (const f of followers) f.reject(outcome.error);
      }
    };
    try {
      const outcomes = await this.write(unique.map((p) => p.item));
      unique.forEach((p, i) => settle(p, outcomes[i]!));
    } catch (err) {
      // The statement failed, so nothing of this batch was committed and retrying creates no duplicate.
      if (unique.length === 1) {
        settle(unique[0]!, { ok: false, error: translate(err) });
        return;
      }
      // One bad row (e.g. its trigger deleted meanwhile) must not fail its neighbours: retry alone.
      await Promise.all(
        unique.map(async (p) => {
          try {
            const [outcome] = await this.write([p.item]);
            settle(p, outcome!);
          } catch (e) {
            settle(p, { ok: false, error: translate(e) });
          }
        }),
      );
    }
  }

  /**
   * Writes the batch in one statement and answers each item. Throws only when the statement failed
   * (nothing committed). Once it committed, every created job is reported as created whatever
   * happens next; a failed lookup of earlier jobs fails only the requests that created nothing.
   */
  private async write(items: IngestItem[]): Promise<Outcome[]> {
    const jobIds = items.map(() => newId("job"));
    const { rows } = await this.pool.query<{ job_id: string }>(INSERT_BATCH, [
      jobIds,
      items.map((i) => i.triggerId),
      items.map((i) => i.accountId),
      items.map((i) => i.agentId),
      items.map((i) => i.idempotencyKey),
      items.map((i) => i.payloadText),
      items.map(() => newId("aud")),
      items.map((i) => i.traceContext ?? null),
      items.map((i) => i.source),
    ]);
    const created = new Set(rows.map((r) => r.job_id));
    if (created.size > 0) {
      const traceOf = new Map(items.map((item, i) => [jobIds[i]!, item.traceContext ?? null]));
      this.onCommitted([...created], [...created].map((id) => traceOf.get(id) ?? null));
    }
    const outcomes: Outcome[] = jobIds.map((jobId) => ({ ok: true, result: { jobId, created: created.has(jobId) } }));
    const losers = items.map((item, i) => ({ item, i })).filter(({ i }) => !created.has(jobIds[i]!));
    if (losers.length === 0) return outcomes;
    const retry = (cause?: unknown) =>
      new AppError("service_unavailable", "Could not look up the job of this Idempotency-Key; retry the request with the same key", { cause, headers: { "Retry-After": "1" } });
    try {
      // Keys already used within 24 h: answer with the first job's id.
      const { rows: existing } = await this.pool.query<{ trigger_id: string | null; agent_id: string; source: JobSource; key: string; job_id: string }>(
        `select trigger_id, '' as agent_id, '' as source, key, job_id from idempotency_records
          where (trigger_id, key) in (select * from unnest($1::text[], $2::text[]))
         union all
         select null, ${R.agent}, ${R.source}, ${R.key}, ${R.job} from ${R.table}
          where (${R.agent}, ${R.source}::text, ${R.key}) in (select * from unnest($3::text[], $4::text[], $5::text[]))`,
        [
          ...(["triggerId", "idempotencyKey"] as const).map((f) => losers.filter((l) => l.item.triggerId !== null).map((l) => l.item[f])),
          ...(["agentId", "source", "idempotencyKey"] as const).map((f) => losers.filter((l) => l.item.triggerId === null).map((l) => l.item[f])),
        ],
      );
      const byKey = new Map(existing.map((r) => [`${keyScope({ triggerId: r.trigger_id, agentId: r.agent_id, source: r.source })}\u0000${r.key}`, r.job_id]));
      for (const { item, i } of losers) {
        const jobId = byKey.get(`${keyScope(item)}\u0000${item.idempotencyKey}`);
        outcomes[i] = jobId ? { ok: true, result: { jobId, created: false } } : { ok: false, error: retry() };
      }
    } catch (err) {
      for (const { i } of losers) outcomes[i] = { ok: false, error: retry(err) };
    }
    return outcomes;
  }
}

function translate(err: unknown): unknown {
  const code = (err as { code?: string })?.code;
  // JSON that JavaScript accepts but jsonb does not (\u0000, lone surrogates).
  if (code === "22P05" || code === "22P02" || code === "22032") return new AppError("invalid_json", "Request body is not valid JSON for storage (unsupported Unicode escape)");
  // A foreign key failed: the trigger (or, for a job without one, the agent) was deleted meanwhile.
  if (code === "23503") return new AppError("trigger_not_found", "Trigger not found");
  return err;
}
