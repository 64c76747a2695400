import type { RequestHandler } from "express";
import { Counter, Histogram, Registry, collectDefaultMetrics, Gauge } from "prom-client";

/** Prometheus metrics (prom-client). One registry per process; the API serves it at /metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: "upstream_request_duration_seconds",
    help: "Model provider latency by provider and outcome",
    labelNames: ["provider", "outcome"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly jobsByStatus = new Gauge({
    name: "jobs",
    help: "Unfinished jobs by status (queued, running, input_required: waiting for an answer to ctx.ask); refreshed at most every METRICS_JOBS_REFRESH_SECONDS",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });
  readonly jobsEstimatedRows = new Gauge({
    name: "jobs_estimated_rows",
    help: "PostgreSQL's estimate of the rows in the jobs table (pg_class.reltuples)",
    registers: [this.registry],
  });
  readonly jobStatusEvents = new Counter({
    name: "job_status_events_total",
    help: "Job status transitions heard by this instance (every instance hears all of them: aggregate with max)",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });

  // Worker side: what the agentRun workflow's activities did in this process.
  readonly jobRunsStarted = new Counter({
    name: "job_runs_started_total",
    help: "Agent runs this worker started (beginRun)",
    registers: [this.registry],
  });
  readonly jobSlotWaits = new Counter({
    name: "job_slot_waits_total",
    help: "Runs that began waiting for a slot (their account's or agent's run limit), by reason; counted once per wait, not per retry",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly retentionBatches = new Counter({
    name: "retention_batches_total",
    help: "Batches (one transaction each) the retention purge committed in this worker",
    registers: [this.registry],
  });
  readonly retentionPurged = new Counter({
    name: "retention_purged_total",
    help: "What the retention purge removed in this worker: payloads (audit entries with every copy) and idempotency_records",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  readonly jobRunsFinished = new Counter({
    name: "job_runs_finished_total",
    help: "Agent runs this worker finished, by final status",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });
  readonly jobRunDuration = new Histogram({
    name: "job_run_duration_seconds",
    help: "Duration of one execution attempt of an agent run, by outcome",
    labelNames: ["outcome"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
    registers: [this.registry],
  });
  readonly sandboxThreads = new Gauge({
    name: "sandbox_pool_threads",
    help: "Script sandbox threads of this process: size (the pool's maximum), started, busy; queued runs waiting",
    labelNames: ["state"] as const,
    registers: [this.registry],
  });

  /** Per-model circuit breaker (providers/breaker.ts): 0 closed, 1 open (model skipped), 2 half-open (one probe). */
  readonly modelCircuitState = new Gauge({
    name: "model_circuit_state",
    help: "Circuit breaker state per model: 0 closed, 1 open, 2 half-open",
    labelNames: ["model"] as const,
    registers: [this.registry],
  });
  readonly modelFallbacks = new Counter({
    name: "model_fallbacks_total",
    help: "Chat turns answered by a fallback model, by the model that failed and the one that answered",
    labelNames: ["from", "to"] as const,
    registers: [this.registry],
  });

  constructor(collectDefaults = true) {
    if (collectDefaults) collectDefaultMetrics({ register: this.registry });
  }

  /** Labels requests by their route template (not the raw path), so ids do not explode cardinality. */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const end = this.httpDuration.startTimer();
      res.once("finish", () => {
        const routePath = (req.route as { path?: string } | undefined)?.path;
        const route = routePath ? `${req.baseUrl}${routePath}` : req.baseUrl || "unmatched";
        const labels = { method: req.method, route, status: String(res.statusCode) };
        this.httpRequests.inc(labels);
        end(labels);
      });
      next();
    };
  }
}
