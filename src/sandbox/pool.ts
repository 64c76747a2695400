import type { Config } from "../config/config.js";
import { AsyncResource } from "node:async_hooks";
import { Worker } from "node:worker_threads";
import { jsonTooDeep, MAX_JSON_DEPTH } from "../infra/json.js";

/**
 * A small pool of sandbox threads (thread.ts). QuickJS runs on the calling thread, so a looping
 * script would block whoever runs it: here it only blocks its own thread, and the pool
 * terminates a thread that overstays the wall-clock deadline and starts a fresh one.
 */

/** The limits of one run: the configured ones (config.sandbox, documented there), or an agent's lower ones. */
export type SandboxLimits = Omit<Config["sandbox"], "maxScriptBytes" | "poolSize" | "threadMaxRuns" | "threadIdleMs">;

/** `chat`, `fetch`, `step:begin`, `step:end`; resolves with a JSON value for the script. */
export type HostCall = (method: string, args: unknown) => Promise<unknown>;

export interface RunOptions {
  source: string;
  input: unknown;
  limits: SandboxLimits;
  secrets?: Record<string, string>;
  /**
   * A ctx.log line, already within the byte limits; `cut` is the marker to show after it when the
   * sandbox shortened it (appended by the host after redaction, so the marker is never redacted).
   */
  onLog?: (line: string, cut?: string) => void;
  host?: HostCall;
  /** Aborting stops the script at once (its thread is terminated): a cancelled run. */
  signal?: AbortSignal;
}

/**
 * A host call failure the script sees (and may catch): a refused fetch, a bad ctx.chat request.
 * Any other error from a host call aborts the run with that error (billing, upstream, database).
 */
export class HostCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostCallError";
  }
}

/** A script failed on its own terms (throw, syntax, timeout, memory): retrying cannot help. */
export class ScriptError extends Error {
  constructor(
    message: string,
    readonly kind: "script" | "timeout" | "memory",
  ) {
    super(message);
    this.name = "ScriptError";
  }
}

type Task =
  | { type: "run"; opts: RunOptions; resolve: (v: unknown) => void; reject: (e: Error) => void }
  | { type: "validate"; source: string; resolve: (v: unknown) => void; reject: (e: Error) => void };

interface Slot {
  worker: Worker;
  busy: boolean;
  task?: Task & { id: number; timer?: NodeJS.Timeout };
  /** Set while the thread waits for work: retires it when it fires. */
  idle?: NodeJS.Timeout;
  /** Runs this thread has finished (it is replaced after RUNS_PER_THREAD). */
  runs: number;
}

const threadUrl = new URL(import.meta.url.endsWith(".ts") ? "./thread.ts" : "./thread.js", import.meta.url);
/** Grace on top of the script deadline before the thread is killed from outside. */
const KILL_GRACE_MS = 1000;
/**
 * A thread that had no work for this long is ended; the next run starts a fresh one (a thread and
 * its QuickJS module: 0.35–0.5 s measured on the shared 2-core machine). An idle thread holds about 24 MB, and up to its last run's
 * SCRIPT_MEMORY_MB more: each run's WebAssembly memory is freed only when the thread's own heap is
 * collected, which an idle thread never does (docs/capacity.md, "Memory"). A minute keeps threads
 * warm through any steady stream of runs. The default of SANDBOX_THREAD_IDLE_SECONDS; a pool made by
 * sandboxPool() takes the configured value.
 */
export const SANDBOX_IDLE_RETIRE_MS = 60_000;
/**
 * A thread is replaced after this many runs. Each run instantiates a fresh QuickJS module (its own
 * WebAssembly memory, so no run sees another's data), and a thread's resident memory grows by about
 * 0.3 MB a run that its own garbage collection does not return (measured: 1,500 trivial runs on 3
 * threads, +500 MB; docs/capacity.md, "Memory"). 100 runs bound that, for one thread start per
 * 100 runs, made ahead of the run that needs it. The default of SANDBOX_THREAD_MAX_RUNS.
 */
export const RUNS_PER_THREAD = 100;

export class SandboxPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;

  private spawned = 0;

  constructor(
    private readonly size: number,
    private readonly idleRetireMs = SANDBOX_IDLE_RETIRE_MS,
    private readonly runsPerThread = RUNS_PER_THREAD,
  ) {}

  run(opts: RunOptions): Promise<unknown> {
    // Host calls answer the thread's messages; bound here they run in the caller's async context
    // (its trace span, its request id), not in the worker thread's event context.
    const bound = opts.host ? { ...opts, host: AsyncResource.bind(opts.host) } : opts;
    return new Promise((resolve, reject) => this.enqueue({ type: "run", opts: bound, resolve, reject }));
  }

  /** Resolves when the source compiles as a module with a default export; else a ScriptError naming the line. */
  async validate(source: string): Promise<void> {
    await new Promise((resolve, reject) => this.enqueue({ type: "validate", source, resolve, reject }));
  }

  private enqueue(task: Task): void {
    if (this.closed) return task.reject(new Error("sandbox pool is closed"));
    this.queue.push(task);
    this.pump();
  }

  private spawn(): Slot {
    // Plain worker: no env, and no inherited flags: thread.ts imports only packages, so run from the
    // source (npm start) Node strips its types itself. With the TypeScript loader npm start runs
    // under, each thread would load its own compiler: ~110 MB a thread instead of ~24 (docs/capacity.md).
    const worker = new Worker(threadUrl, { env: {}, execArgv: [], stdout: false, stderr: false });
    const slot: Slot = { worker, busy: false, runs: 0 };
    this.spawned++;
    worker.unref();
    worker.on("message", (msg) => this.onMessage(slot, msg));
    worker.on("error", (err) => this.onExit(slot, `sandbox thread failed: ${err.message}`));
    worker.on("exit", () => this.onExit(slot, "sandbox thread exited"));
    this.slots.push(slot);
    return slot;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const task = this.queue.shift()!;
      const id = this.nextId++;
      clearTimeout(slot.idle);
      slot.busy = true;
      slot.task = { ...task, id };
      if (task.type === "run") {
        const { opts } = task;
        // Serializing the input can throw (nesting too deep for the stack): that fails this task only.
        let input: string;
        try {
          input = JSON.stringify(opts.input ?? null);
        } catch (err) {
          this.finish(slot, { ok: false, error: new ScriptError(`The input cannot be passed to the script: ${(err as Error).message}`, "script") });
          continue;
        }
        if (jsonTooDeep(input)) {
          this.finish(slot, { ok: false, error: new ScriptError(`The input nests arrays/objects deeper than ${MAX_JSON_DEPTH} levels`, "script") });
          continue;
        }
        const { limits } = opts;
        slot.task.timer = setTimeout(() => this.kill(slot!, new ScriptError(`Script exceeded its wall time limit of ${limits.wallTimeMs} ms`, "timeout")), limits.wallTimeMs + KILL_GRACE_MS);
        opts.signal?.addEventListener("abort", () => slot!.task?.id === id && this.kill(slot!, new ScriptError("The run was cancelled", "script")), { once: true });
        slot.worker.postMessage({
          type: "run",
          id,
          source: opts.source,
          input,
          secrets: JSON.stringify(opts.secrets ?? {}),
          cpuTimeMs: limits.cpuTimeMs,
          wallTimeMs: limits.wallTimeMs,
          memoryMb: limits.memoryMb,
          maxHostCalls: limits.maxHostCalls,
          maxLogLines: limits.maxLogLines,
          maxLogLineBytes: limits.maxLogLineBytes,
          maxLogBytes: limits.maxLogBytes,
          maxResultBytes: limits.maxResultBytes,
        });
      } else {
        slot.task.timer = setTimeout(() => this.kill(slot!, new ScriptError("Script validation timed out", "timeout")), 10_000);
        slot.worker.postMessage({ type: "validate", id, source: task.source });
      }
    }
  }

  private finish(slot: Slot, outcome: { ok: true; value: unknown } | { ok: false; error: Error }): void {
    const task = slot.task;
    if (!task) return;
    clearTimeout(task.timer);
    slot.task = undefined;
    slot.busy = false;
    // Out of the pool before the queue is pumped, so the next task goes to another thread.
    const worn = task.type === "run" && ++slot.runs >= this.runsPerThread && this.slots.includes(slot);
    if (worn) this.remove(slot);
    if (outcome.ok) task.resolve(outcome.value);
    else task.reject(outcome.error);
    this.pump();
    if (worn) {
      slot.worker.terminate().catch(() => {});
      // Its replacement starts now, not when the next run needs it: starting a thread (loading
      // QuickJS) takes a few hundred ms, which would otherwise fall on that run.
      if (!this.closed && this.slots.length < this.size) this.armIdle(this.spawn());
    } else this.armIdle(slot);
  }

  /** An idle thread is retired once it has had no work for the idle time. */
  private armIdle(slot: Slot): void {
    if (slot.busy || !this.slots.includes(slot)) return;
    clearTimeout(slot.idle);
    slot.idle = setTimeout(() => !slot.busy && this.kill(slot), this.idleRetireMs).unref();
  }

  /** Whatever a thread sends, a failure to handle it fails that thread's task, never the process. */
  private onMessage(slot: Slot, msg: Record<string, any>): void {
    try {
      this.handleMessage(slot, msg);
    } catch (err) {
      this.kill(slot, new ScriptError(`The script's output could not be handled: ${(err as Error).message}`, "script"));
    }
  }

  private handleMessage(slot: Slot, msg: Record<string, any>): void {
    const task = slot.task;
    if (!task || msg.id !== task.id) return;
    if (msg.type === "log" && task.type === "run") {
      task.opts.onLog?.(String(msg.line), typeof msg.cut === "string" ? msg.cut : undefined);
    } else if (msg.type === "host-call" && task.type === "run") {
      const host = task.opts.host;
      const answer = (ok: boolean, value?: unknown, error?: string) => {
        if (slot.task?.id !== task.id) return;
        let text: string | undefined;
        try {
          text = ok ? JSON.stringify(value ?? null) : undefined;
        } catch (err) {
          [ok, error] = [false, `The host call's answer cannot be passed back: ${(err as Error).message}`];
        }
        slot.worker.postMessage({ type: "host-reply", id: task.id, callId: msg.callId, ok, value: text, error });
      };
      if (!host) return answer(false, undefined, `ctx.${msg.method} is not available here`);
      Promise.resolve()
        .then(() => host(String(msg.method), JSON.parse(msg.args)))
        .then(
          (v) => answer(true, v),
          (err: unknown) => {
            if (err instanceof HostCallError) return answer(false, undefined, err.message);
            // Billing, upstream and database failures abort the whole run with their own classification.
            if (slot.task?.id !== task.id) return;
            this.finish(slot, { ok: false, error: err instanceof Error ? err : new Error(String(err)) });
            this.kill(slot);
          },
        );
    } else if (msg.type === "result") {
      if (msg.ok && task.type === "run" && jsonTooDeep(String(msg.result))) {
        this.finish(slot, { ok: false, error: new ScriptError(`The result nests arrays/objects deeper than ${MAX_JSON_DEPTH} levels`, "script") });
      } else if (msg.ok) this.finish(slot, { ok: true, value: task.type === "run" ? JSON.parse(msg.result) : undefined });
      else this.finish(slot, { ok: false, error: new ScriptError(String(msg.error), msg.kind ?? "script") });
      // An out-of-memory instance may leave the thread's heap in a bad state: start a fresh one.
      if (msg.kind === "memory") this.kill(slot);
    }
  }

  private kill(slot: Slot, error?: Error): void {
    // Out of the pool first: finishing pumps the queue, which must not hand the next task to this dying thread.
    this.remove(slot);
    if (error) this.finish(slot, { ok: false, error });
    slot.worker.terminate().catch(() => {});
    this.pump();
  }

  private remove(slot: Slot): void {
    clearTimeout(slot.idle);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
  }

  private onExit(slot: Slot, reason: string): void {
    if (!this.slots.includes(slot)) return;
    this.remove(slot);
    if (slot.task) this.finish(slot, { ok: false, error: new Error(reason) });
    if (!this.closed) this.pump();
  }

  /** For the worker's /metrics; `spawned`: threads started since the pool was made (replacements included). */
  stats(): { size: number; started: number; busy: number; queued: number; spawned: number } {
    return { size: this.size, started: this.slots.length, busy: this.slots.filter((s) => s.busy).length, queued: this.queue.length, spawned: this.spawned };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.reject(new Error("sandbox pool is closed"));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate().catch(() => {})));
  }
}
