import type { Runtime } from "../runtime/runtime.js";
import { JOB_STATUS, type JobStatusEvent } from "../jobs/store.js";

/**
 * Job figures for the API's /metrics, without counting the jobs table on every scrape (it grows
 * with history; a scrape every few seconds from several Prometheus servers would scan it over and
 * over). Two cheap sources instead:
 * - `jobs{status="queued"|"running"}`: an exact count through the partial index
 *   `jobs_active_idx` (its size is the work in flight, not the history), refreshed at most once per
 *   `refreshMs` however often /metrics is scraped; `jobs_estimated_rows` is PostgreSQL's own
 *   estimate of the whole table (`pg_class.reltuples`, kept by autovacuum/ANALYZE), free to read.
 * - `jobs{status="input_required"}`: the runs waiting for an answer (ctx.ask), counted on the same
 *   refresh, in the same statement. They hold no run slot and may wait for days, so they are a
 *   branch of their own, through their own partial index `jobs_input_required_idx`.
 * - `job_status_events_total{status}`: transitions this instance heard on the `job_status`
 *   channel (every instance hears every transition, so aggregate across instances with `max`,
 *   not `sum`). done/failed totals come from here, as `rate()`/`increase()`.
 */
export const UNFINISHED_COUNT = `select status, count(*)::int as n from jobs where status in ('queued', 'running') group by status
  union all select 'input_required', count(*)::int from jobs where status = 'input_required'`;
const TABLE_ESTIMATE = `select greatest(reltuples, 0)::float8 as n from pg_class where oid = 'jobs'::regclass`;

export class JobMetrics {
  private refreshedAt = -Infinity;
  private refreshing: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly refreshMs: number,
  ) {}

  async start(): Promise<void> {
    const { metrics } = this.runtime;
    this.unsubscribe = await this.runtime.events.subscribe(JOB_STATUS, (payload) => {
      try {
        const event = JSON.parse(payload) as JobStatusEvent;
        metrics.jobStatusEvents.inc({ status: event.status });
      } catch {
        /* not ours */
      }
    });
  }

  /** Called by each scrape: queries at most once per `refreshMs`; concurrent scrapes share one refresh. */
  refreshIfStale(now = performance.now()): Promise<void> {
    if (now - this.refreshedAt < this.refreshMs) return Promise.resolve();
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshedAt = performance.now();
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(): Promise<void> {
    const { pool, metrics } = this.runtime;
    const [unfinished, estimate] = await Promise.all([pool.query<{ status: string; n: number }>(UNFINISHED_COUNT), pool.query<{ n: number }>(TABLE_ESTIMATE)]);
    const counts = new Map(unfinished.rows.map((r) => [r.status, r.n]));
    for (const status of ["queued", "running", "input_required"]) metrics.jobsByStatus.set({ status }, counts.get(status) ?? 0);
    metrics.jobsEstimatedRows.set(estimate.rows[0]?.n ?? 0);
  }

  close(): void {
    this.unsubscribe?.();
  }
}
