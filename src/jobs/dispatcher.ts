import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import type { Runtime } from "../runtime/runtime.js";
import { AGENT_RUN_WORKFLOW, DELIVER_WORKFLOW } from "../../workflows/contract.js";
import { DELIVERIES_TABLE } from "../outbound/store.js";

export { AGENT_RUN_WORKFLOW } from "../../workflows/contract.js";

const SWEEP_BATCH = 500;
/** A pass ends after this many batches (it releases what it could not start, then goes again). */
const MAX_BATCHES_PER_PASS = 20;
/** How long a sweep's claim on its rows lasts; longer than a pass of SWEEP_BATCH starts takes. */
const DISPATCH_LEASE_MS = 60_000;

/**
 * What a dispatcher starts: the rows of `table` (with the columns id, created_at, dispatched_at,
 * dispatch_lease_until, trace_context) each as one run of `workflow`, workflow id = row id.
 */
export interface DispatchTarget {
  table: string;
  workflow: string;
}

export const JOB_DISPATCH: DispatchTarget = { table: "jobs", workflow: AGENT_RUN_WORKFLOW };
/** Outbound deliveries (outbound/): recorded with the event they carry, each started as a `deliver` workflow. */
export const DELIVERY_DISPATCH: DispatchTarget = { table: DELIVERIES_TABLE, workflow: DELIVER_WORKFLOW };

/**
 * Starts the `agentRun` workflow of committed jobs (or, with DELIVERY_DISPATCH, the `deliver`
 * workflow of recorded deliveries) (workflow id = job id). Two paths:
 * - right after the ingest commit (`enqueue`), for low latency;
 * - a loop that picks up any job still undispatched after a few seconds (Temporal was down, the
 *   process died between commit and start, the immediate queue overflowed).
 * A start is idempotent: REJECT_DUPLICATE refuses a second run of the same id even after the
 * first completed, and "already started" counts as success. So a job starts exactly once.
 */
export class Dispatcher {
  private readonly queue: string[] = [];
  /** Stored trace contexts of queued jobs (only filled while tracing is on). */
  private readonly traceContexts = new Map<string, string>();
  private active = 0;
  private toMark: string[] = [];
  /** Mark updates sent and not yet answered (a timer's flush may still be running when a pass ends). */
  private readonly marking = new Set<Promise<void>>();
  private markTimer: NodeJS.Timeout | undefined;
  private loopTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** After a failed start, skip the immediate path for a while; the loop catches up. */
  private unhealthyUntil = 0;
  private sweeping = false;
  private lastSweepFull = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly options: { concurrency?: number; maxQueue?: number; sweepEveryMs?: number; sweepAfterMs?: number; sweepBatch?: number } = {},
    private readonly target: DispatchTarget = JOB_DISPATCH,
  ) {}

  private get concurrency() {
    return this.options.concurrency ?? 32;
  }

  enqueue(jobIds: string[], traceContexts: (string | null)[] = []): void {
    if (this.stopped || Date.now() < this.unhealthyUntil) return;
    const room = (this.options.maxQueue ?? 10_000) - this.queue.length;
    const taken = jobIds.slice(0, Math.max(0, room));
    this.queue.push(...taken);
    taken.forEach((id, i) => traceContexts[i] && this.traceContexts.set(id, traceContexts[i]));
    this.pump();
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0 && !this.stopped) {
      const id = this.queue.shift()!;
      this.active++;
      this.startWorkflow(id)
        .catch((err) => {
          this.unhealthyUntil = Date.now() + 2000;
          this.queue.length = 0;
          this.traceContexts.clear();
          this.runtime.log.warn({ err: String(err), jobId: id }, "workflow start failed; the dispatcher will retry");
        })
        .finally(() => {
          this.active--;
          this.pump();
        });
    }
  }

  /** Starts one job's workflow; resolves when it is started (or already was) and marked. */
  async startWorkflow(jobId: string, traceContext?: string | null): Promise<void> {
    const taskQueue = this.runtime.config.temporal.taskQueue;
    // Eager (TEMPORAL_EAGER_START) when this process runs the worker of the task queue.
    const { client, connection, eager } = this.runtime.temporal.starterFor(taskQueue);
    const start = () =>
      connection.withDeadline(Date.now() + 5000, () =>
        client.workflow.start(this.target.workflow, {
          taskQueue,
          workflowId: jobId,
          args: [jobId],
          workflowIdReusePolicy: "REJECT_DUPLICATE",
          ...(eager ? { requestEagerStart: true } : {}),
        }),
      );
    const { tracing } = this.runtime;
    const stored = traceContext ?? this.traceContexts.get(jobId);
    this.traceContexts.delete(jobId);
    try {
      // The start continues the trace of the request that created the job (stored with it).
      await (tracing ? tracing.inStoredTrace(stored, "dispatch job", { "job.id": jobId }, start) : start());
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    this.markDispatched(jobId);
  }

  /** dispatched_at updates are batched: a few ms of delay only means the sweep may retry a start, which is harmless. */
  private markDispatched(jobId: string): void {
    this.toMark.push(jobId);
    if (this.toMark.length >= 500) void this.flushMarks();
    else this.markTimer ??= setTimeout(() => void this.flushMarks(), 20);
  }

  /** Sends the pending marks; resolves once they and every flush sent before them are answered. */
  async flushMarks(): Promise<void> {
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    const ids = this.toMark;
    this.toMark = [];
    if (ids.length > 0) {
      const sent = this.runtime.pool
        .query(`update ${this.target.table} set dispatched_at = now() where id = any($1::text[]) and dispatched_at is null`, [ids])
        .then(
          () => undefined,
          (err: unknown) => this.runtime.log.warn({ err: String(err) }, "could not mark jobs dispatched; they will be re-started harmlessly"),
        )
        .finally(() => this.marking.delete(sent));
      this.marking.add(sent);
    }
    // Not only this call's own update: a pass that returned while a timer's flush was still on the
    // wire would release that flush's rows (their lease, "dispatched_at is null") for a second start.
    await Promise.all(this.marking);
  }

  /** Claims up to `batch` undispatched jobs (a lease taken with SKIP LOCKED). */
  private async claim(batch: number): Promise<{ id: string; trace_context: string | null }[]> {
    const { rows } = await this.runtime.pool.query<{ id: string; trace_context: string | null }>(
      `update ${this.target.table} set dispatch_lease_until = now() + make_interval(secs => $2::float8 / 1000)
       where id in (
         select id from ${this.target.table}
         where dispatched_at is null and created_at < now() - make_interval(secs => $1::float8 / 1000)
           and (dispatch_lease_until is null or dispatch_lease_until < now())
         order by created_at limit $3
         for update skip locked)
       returning id, trace_context`,
      [this.options.sweepAfterMs ?? 3000, DISPATCH_LEASE_MS, batch],
    );
    return rows;
  }

  /**
   * One pass over jobs committed but not started; returns how many were started. The pass claims
   * its rows in batches (a lease, taken with SKIP LOCKED), so the dispatchers of N API instances
   * share a backlog instead of each starting all of it; rows a pass could not start are released
   * again, and the lease of a dispatcher that died runs out. While the lanes start the last rows of
   * a batch, the next batch is already being claimed, so no lane waits for a claim (nor for the
   * slowest start of the batch before) while a backlog lasts.
   */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let started = 0;
    try {
      const batch = this.options.sweepBatch ?? SWEEP_BATCH;
      const rows: { id: string; trace_context: string | null }[] = [];
      let more = true; // the last claim was full: there may be more behind it
      let claimError: unknown;
      let claiming: Promise<void> | undefined;
      const claimNext = () =>
        (claiming ??= this.claim(batch)
          .then((got) => {
            rows.push(...got);
            // Not "a full batch": a claim racing another instance's comes back short (SKIP
            // LOCKED passes over the rows that one is taking) while more are waiting. Only an
            // empty claim says the backlog is gone.
            more = got.length > 0 && rows.length < batch * MAX_BATCHES_PER_PASS;
          })
          .catch((err: unknown) => {
            claimError = err;
            more = false;
          })
          .finally(() => (claiming = undefined)));
      await claimNext();
      if (claimError) throw claimError;
      let i = 0;
      let failed = false;
      const notStarted: string[] = [];
      const lane = async () => {
        for (;;) {
          if (more && !failed && !this.stopped && rows.length - i <= this.concurrency) void claimNext();
          if (i >= rows.length) {
            if (!claiming) return;
            await claiming;
            continue;
          }
          if (this.stopped) return;
          const { id, trace_context } = rows[i++]!;
          if (failed) {
            notStarted.push(id);
            continue;
          }
          try {
            await this.startWorkflow(id, trace_context);
            started++;
          } catch {
            failed = true; // Temporal unreachable: stop this pass, try again next tick
            notStarted.push(id);
          }
        }
      };
      await Promise.all(Array.from({ length: this.concurrency }, lane));
      await claiming;
      while (i < rows.length) notStarted.push(rows[i++]!.id);
      await this.flushMarks();
      if (notStarted.length > 0) {
        await this.runtime.pool.query(`update ${this.target.table} set dispatch_lease_until = null where id = any($1::text[]) and dispatched_at is null`, [notStarted]);
      }
      if (!failed && started > 0) this.unhealthyUntil = 0;
      // A pass cut short by its batch limit goes again at once; a failed claim waits for the next tick.
      this.lastSweepFull = !failed && claimError === undefined && rows.length >= batch * MAX_BATCHES_PER_PASS;
      if (claimError) throw claimError; // after the cleanup above; the loop logs it and goes on
    } finally {
      this.sweeping = false;
    }
    return started;
  }

  start(): void {
    if (this.loopTimer || this.stopped) return;
    const tick = () => {
      this.sweep()
        .catch((err) => {
          // Only a closed pool (shutdown) ends the loop; a lost connection (a database restart)
          // must not stop dispatching on this instance for good.
          if (/pool after calling end/i.test(String(err))) this.stop();
          else this.runtime.log.warn({ err }, "dispatcher sweep failed");
        })
        .finally(() => {
          // A full batch means a backlog: go again at once instead of waiting for the next tick.
          if (!this.stopped) this.loopTimer = setTimeout(tick, this.lastSweepFull ? 0 : (this.options.sweepEveryMs ?? 1000)).unref();
        });
    };
    this.loopTimer = setTimeout(tick, this.options.sweepEveryMs ?? 1000).unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.loopTimer);
  }

  async close(): Promise<void> {
    this.stop();
    await this.flushMarks();
  }
}
