import type pg from "pg";

/**
 * The run journal in PostgreSQL (`job_steps`, ARCHITECTURE.md "Automation journal").
 * Keyed by job id and the step's position, so any worker that picks the run up after a crash
 * reads what the dead one completed.
 */

export interface StepRecord {
  status: "started" | "done";
  result: unknown;
  costMicros: number;
  executions: number;
  seqAfter: number | null;
}

export class Journal {
  /** True while the journal is known to hold no step of this job (loaded empty, nothing written since). */
  private empty = false;

  constructor(
    private readonly db: pg.Pool,
    readonly jobId: string,
  ) {}

  /** Every step of the job, by key (one read when an attempt starts). */
  async load(): Promise<Map<string, StepRecord>> {
    const { rows } = await this.db.query<StepRecord & { key: string }>(
      `select key, status, result, cost_micros as "costMicros", executions, seq_after as "seqAfter" from job_steps where job_id = $1`,
      [this.jobId],
    );
    this.empty = rows.length === 0;
    return new Map(rows.map((r) => [r.key, r]));
  }

  /**
   * Records that a step is being executed (again, if a crash cut an earlier execution), with what
   * it will hold in flight when that is known beforehand (`info`, as `inflight` notes it).
   */
  async start(key: string, kind: string, info?: unknown): Promise<void> {
    this.empty = false;
    await this.db.query(
      `insert into job_steps (job_id, key, kind, status, result, executions, started_at) values ($1, $2, $3, 'started', $4::jsonb, 1, now())
       on conflict (job_id, key) do update set executions = job_steps.executions + 1, started_at = now(), result = excluded.result`,
      [this.jobId, key, kind, info === undefined ? null : JSON.stringify(info)],
    );
  }

  /** Notes what a started step holds while in flight (a model call's hold and thread lease), for recovery after a crash. */
  async inflight(key: string, info: unknown): Promise<void> {
    await this.db.query("update job_steps set result = $3::jsonb where job_id = $1 and key = $2 and status = 'started'", [this.jobId, key, JSON.stringify(info)]);
  }

  /** Stores a completed step; once done, a step is never executed again for this job. */
  async finish(key: string, kind: string, result: unknown, costMicros: number, seqAfter: number): Promise<void> {
    this.empty = false;
    await this.db.query(
      `insert into job_steps (job_id, key, kind, status, result, cost_micros, seq_after, finished_at) values ($1, $2, $3, 'done', $4::jsonb, $5, $6, now())
       on conflict (job_id, key) do update set status = 'done', result = $4::jsonb, cost_micros = $5, seq_after = $6, finished_at = now()`,
      [this.jobId, key, kind, JSON.stringify(result ?? null), costMicros, seqAfter],
    );
  }

  /** What the job actually paid: the sum over its completed steps, whichever attempt ran them. */
  async cost(): Promise<number> {
    // A run that journaled no step paid nothing through it: no round trip for the common script.
    if (this.empty) return 0;
    const { rows } = await this.db.query<{ c: string }>("select coalesce(sum(cost_micros), 0)::text as c from job_steps where job_id = $1", [this.jobId]);
    return Number(rows[0]?.c ?? 0);
  }
}
