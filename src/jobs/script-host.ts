import { runChatTurn } from "../chat/engine.js";
import { randomBase62 } from "../infra/ids.js";
import { answeredTurn, reclaimExpiredTurns } from "../threads/store.js";
import { EgressError, type Egress } from "../egress/fetch.js";
import { AppError } from "../errors/app-error.js";
import { unavailableError } from "../errors/unavailable.js";
import { HostCallError } from "../sandbox/index.js";
import type { Runtime } from "../runtime/runtime.js";
import type { AskHandler } from "./ask.js";
import type { Journal, StepRecord } from "./journal.js";
import type { Redactor } from "./redact.js";

/** One item of the audit entry's "tools used" (contract shared with the operations API). */
export interface ToolUse {
  kind: "model" | "http";
  name: string;
  status: number | string;
  durationMs: number;
  costMicros: number;
}

/** The job a run belongs to (its ids go onto the ledger rows of its model calls). */
export interface RunJob {
  id: string;
  accountId: string;
  agentId: string;
  triggerId: string | null;
}

/** Runs one model call of a run and records it in the tools used, whether it succeeds or not. */
export async function usingModel<T extends { model: string; costMicros: number; attempts?: { model: string; error?: string }[] }>(
  execution: Execution,
  model: string | null,
  call: () => Promise<T>,
  onTool?: (tool: ToolUse) => void,
): Promise<T> {
  const started = performance.now();
  try {
    const r = await call();
    // Models that failed before a fallback answered are part of the audit too.
    for (const a of r.attempts ?? []) if (a.error) execution.toolsUsed.push({ kind: "model", name: a.model, status: a.error, durationMs: 0, costMicros: 0 });
    const tool: ToolUse = { kind: "model", name: r.model, status: "ok", durationMs: Math.round(performance.now() - started), costMicros: r.costMicros };
    execution.toolsUsed.push(tool);
    onTool?.(tool);
    return r;
  } catch (err) {
    const status = err instanceof AppError ? err.code : "error";
    execution.toolsUsed.push({ kind: "model", name: model ?? "default", status, durationMs: Math.round(performance.now() - started), costMicros: 0 });
    throw err;
  }
}

/** What one execution of an agent produced; filled as the run goes, so a failure still reports it. */
export interface Execution {
  result: unknown;
  threadId: string | null;
  costMicros: number;
  logs: string[];
  modelCalls: { model: string; usage: unknown; costMicros: number }[];
  toolsUsed: ToolUse[];
}

/** A journaled result: the script's value plus what the audit entry records about the call. */
interface Stored {
  value: unknown;
  tool?: ToolUse;
  threadId?: string;
  modelCall?: Execution["modelCalls"][number];
}

/**
 * What a model-call step holds while in flight (stored in its `started` journal row). The turn's
 * id is chosen, and written with the step's start, before the turn takes its thread's lease: a crash
 * between that lease and the turn's first note would otherwise leave the run's thread leased by a
 * turn nobody can name, and every retry busy until the lease expired. `threadId` is null until a
 * run's first call has made its thread.
 */
interface InFlightTurn {
  holdReference: string;
  threadId: string | null;
}

const MAX_STEP_NAME = 120;

export interface HostDeps {
  runtime: Runtime;
  job: RunJob;
  journal: Journal;
  steps: Map<string, StepRecord>;
  egress: Egress;
  egressAllow: string[];
  redact: Redactor;
  maxLogLines: number;
  execution: Execution;
  /** ctx.ask (src/input-requests/); without it ctx.ask is not available. */
  ask?: AskHandler;
}

/**
 * The host side of a script's `ctx`: every ctx.chat, ctx.fetch and ctx.step is a journaled step
 * keyed by its position in the run (`<seq>:<kind>[:<name>]`). A step the journal has as done is
 * answered from it; anything else is executed and stored. Like a Temporal workflow, a script
 * must make its journaled calls in the same order on every attempt for replay to line up.
 */
export class ScriptHost {
  private seq = 0;
  private readonly open = new Set<string>();
  private truncated = false;

  constructor(private readonly d: HostDeps) {}

  /** A line the sandbox already bounded (SCRIPT_MAX_LOG_LINE_BYTES, SCRIPT_MAX_LOG_BYTES); `cut` marks a shortened one. */
  log(line: string, cut?: string): void {
    const { logs } = this.d.execution;
    if (logs.length >= this.d.maxLogLines) {
      if (!this.truncated) logs.push(`… truncated: only the first ${this.d.maxLogLines} ctx.log lines are kept`);
      this.truncated = true;
      return;
    }
    logs.push(this.d.redact.text(line) + (cut ?? ""));
  }

  call(method: string, args: unknown): Promise<unknown> {
    switch (method) {
      case "chat":
        return this.journaledChat((key, turnId) => this.chat(args, key, turnId));
      case "fetch":
        return this.journaled("fetch", undefined, (key) => this.fetch(args, key));
      case "step:begin":
        return this.stepBegin(args);
      case "step:end":
        return this.stepEnd(args);
      case "ask":
        return this.ask(args);
      default:
        throw new HostCallError(`ctx.${method} is not available`);
    }
  }

  /**
   * The one model call of a run without a script, journaled like ctx.chat (step `1:chat`): a retry
   * after a crash answers it from the journal, or reclaims the hold of the call the crash cut, so
   * the run pays for one answer. Errors stay AppErrors (they decide whether the run is retried).
   */
  async modelCall(messages: { role: "user"; content: string }[]): Promise<{ content: string }> {
    return (await this.journaledChat((key, turnId) => this.chat({ messages }, key, turnId, false))) as { content: string };
  }

  private nextKey(kind: string, name?: string): string {
    return `${++this.seq}:${kind}${name ? `:${name}` : ""}`;
  }

  private replay(stored: Stored): unknown {
    if (stored.tool) this.d.execution.toolsUsed.push(stored.tool);
    if (stored.modelCall) this.d.execution.modelCalls.push(stored.modelCall);
    if (stored.threadId) this.d.execution.threadId = stored.threadId;
    return stored.value;
  }

  /** A model call: journaled with the id its turn will have (see InFlightTurn). */
  private journaledChat(run: (key: string, turnId: string) => Promise<{ stored: Stored; cost: number }>): Promise<unknown> {
    const turnId = `chatcmpl-${randomBase62(18)}`;
    const inflight: InFlightTurn = { holdReference: turnId, threadId: this.d.execution.threadId ?? null };
    return this.journaled("chat", undefined, (key) => run(key, turnId), inflight);
  }

  private async journaled(kind: string, name: string | undefined, run: (key: string) => Promise<{ stored: Stored; cost: number }>, inflight?: InFlightTurn): Promise<unknown> {
    const key = this.nextKey(kind, name);
    const done = this.d.steps.get(key);
    if (done?.status === "done") return this.replay(done.result as Stored);
    const answered = done?.status === "started" && kind === "chat" ? await this.recoverCutTurn(done.result as InFlightTurn | null) : undefined;
    if (answered) this.replay(answered.stored);
    else await this.d.journal.start(key, kind, inflight);
    const { stored, cost } = answered ?? (await run(key));
    const clean = this.d.redact.json(stored);
    await this.d.journal.finish(key, kind, clean, cost, this.seq);
    return clean.value;
  }

  /**
   * A model call cut by a crash left its thread leased and its hold placed: if the turn never
   * finished (its lease is still there), free both, so the re-executed call can use the run's
   * thread and the account pays only for calls that answered. If it did finish — saved and paid,
   * the process dying before the step was journaled — the step is completed from the saved turn
   * (returned as its stored result), so the model is not called, nor paid, twice.
   */
  private async recoverCutTurn(inflight: InFlightTurn | null): Promise<{ stored: Stored; cost: number } | undefined> {
    if (!inflight?.holdReference || !inflight.threadId) return undefined;
    const { pool } = this.d.runtime;
    if ((await reclaimExpiredTurns(pool, { threadId: inflight.threadId, turnId: inflight.holdReference }, this.d.runtime.turnReclaim)).turns > 0) return undefined;
    const turn = await answeredTurn(pool, inflight.threadId, inflight.holdReference);
    if (!turn) return undefined;
    const usage = { prompt_tokens: turn.inputTokens, completion_tokens: turn.outputTokens, total_tokens: turn.inputTokens + turn.outputTokens };
    const modelCall = { model: turn.model, usage, costMicros: turn.costMicros };
    const tool: ToolUse = { kind: "model", name: turn.model, status: "ok", durationMs: 0, costMicros: turn.costMicros };
    return { stored: { value: { content: turn.content, usage, model: turn.model }, tool, threadId: inflight.threadId, modelCall }, cost: turn.costMicros };
  }

  private async chat(raw: unknown, key: string, turnId: string, fromScript = true): Promise<{ stored: Stored; cost: number }> {
    const args = (raw ?? {}) as { model?: unknown; messages?: unknown; maxTokens?: unknown; max_tokens?: unknown };
    if (!Array.isArray(args.messages)) throw new HostCallError("ctx.chat needs { model, messages: [{ role, content }] }");
    const maxTokens = args.maxTokens ?? args.max_tokens;
    const { execution, job } = this.d;
    let inflight: Promise<void> | undefined;
    let tool: ToolUse | undefined;
    const model = typeof args.model === "string" ? args.model : null;
    const r = await usingModel(execution, model, () => runChatTurn(this.d.runtime, {
      accountId: job.accountId,
      agentId: job.agentId,
      // Every ctx.chat of one run goes to the same thread, so the run's conversation is kept together.
      threadId: execution.threadId,
      model,
      // A secret never reaches the thread (or the model).
      messages: this.d.redact.json(args.messages) as { role: "system" | "user" | "assistant"; content: string }[],
      maxTokens: typeof maxTokens === "number" ? maxTokens : undefined,
      run: { jobId: job.id, triggerId: job.triggerId },
      turnId,
    }, {
      // Recorded before the upstream call, so a crash mid-call can be cleaned up by the next attempt.
      onStart: ({ id, threadId }) => {
        inflight = this.d.journal.inflight(key, { holdReference: id, threadId } satisfies InFlightTurn).catch(() => {});
      },
    }), (t) => (tool = t)).catch((err: unknown) => {
      // Request-shape problems are the script's to handle (it can catch them); others abort the run.
      if (fromScript && err instanceof AppError && ["invalid_request_error", "validation_failed", "model_not_found"].includes(err.code)) throw new HostCallError(err.message);
      // A database outage is no fault of the script: abort the run as retryable (service_unavailable).
      throw unavailableError(err) ?? err;
    });
    await inflight;
    execution.threadId = r.threadId;
    const modelCall = { model: r.model, usage: r.usage, costMicros: r.costMicros };
    execution.modelCalls.push(modelCall);
    return { stored: { value: { content: r.content, usage: r.usage, model: r.model }, tool, threadId: r.threadId, modelCall }, cost: r.costMicros };
  }

  private async fetch(raw: unknown, key: string): Promise<{ stored: Stored; cost: number }> {
    const a = (raw ?? {}) as { url?: unknown; method?: unknown; headers?: unknown; body?: unknown };
    const method = typeof a.method === "string" ? a.method.toUpperCase() : "GET";
    const url = typeof a.url === "string" ? a.url : "";
    let host = "?";
    try {
      host = new URL(url).host;
    } catch {
      /* named in the error below */
    }
    const headers: Record<string, string> = {};
    if (a.headers && typeof a.headers === "object") for (const [k, v] of Object.entries(a.headers)) headers[k] = String(v);
    const tool: ToolUse = { kind: "http", name: this.d.redact.text(`${method} ${host}`), status: "failed", durationMs: 0, costMicros: 0 };
    const started = Date.now();
    try {
      const call = () =>
        this.d.egress(
          { url, method, headers, body: typeof a.body === "string" ? a.body : undefined },
          // A header holding one of the agent's secrets is one the redactor would change.
          { allow: this.d.egressAllow, idempotencyKey: `${this.d.job.id}:${key}`, carriesSecret: (v) => this.d.redact.text(v) !== v },
        );
      // The call's span (tracing on) names its URL: the agent's secrets in it are redacted on export.
      const tracing = this.d.runtime.tracing;
      const res = tracing ? await tracing.withRedaction((t) => this.d.redact.text(t), call) : await call();
      tool.status = res.status;
      return { stored: { value: res, tool }, cost: 0 };
    } catch (err) {
      if (!(err instanceof EgressError)) throw err;
      tool.status = err.refused ? "refused" : "failed";
      throw new HostCallError(this.d.redact.text(err.message));
    } finally {
      tool.durationMs = Date.now() - started;
      this.d.execution.toolsUsed.push(tool);
    }
  }

  /**
   * ctx.ask: journaled by its position like a step. Until it is answered (or times out) the
   * handler throws InputRequested, which ends this attempt; the re-run after the answer finds it
   * here and journals the outcome, so later re-runs answer it from the journal.
   */
  private async ask(args: unknown): Promise<unknown> {
    const ask = this.d.ask;
    if (!ask) throw new HostCallError("ctx.ask is not available");
    const key = this.nextKey("ask");
    const done = this.d.steps.get(key);
    if (done?.status === "done") return this.replay(done.result as Stored);
    // Not journaled as started: an unanswered ask is recorded as an input request, not a step.
    const stored = this.d.redact.json({ value: await ask(this.d.job, key, args) } as Stored);
    await this.d.journal.finish(key, "ask", stored, 0, this.seq);
    return stored.value;
  }

  private async stepBegin(raw: unknown): Promise<{ done: true; value: unknown } | { done: false; key: string }> {
    const name = String((raw as { name?: unknown })?.name ?? "").slice(0, MAX_STEP_NAME);
    const key = this.nextKey("step", name);
    const done = this.d.steps.get(key);
    if (done?.status === "done") {
      // Whatever ran inside the step ran then; skip its keys so later calls line up.
      this.seq = Math.max(this.seq, done.seqAfter ?? this.seq);
      return { done: true, value: this.replay(done.result as Stored) };
    }
    await this.d.journal.start(key, "step");
    this.open.add(key);
    return { done: false, key };
  }

  private async stepEnd(raw: unknown): Promise<unknown> {
    const { key, value } = (raw ?? {}) as { key?: unknown; value?: unknown };
    if (typeof key !== "string" || !this.open.delete(key)) throw new HostCallError("ctx.step: unknown step");
    const stored = this.d.redact.json({ value } as Stored);
    await this.d.journal.finish(key, "step", stored, 0, this.seq);
    return stored.value;
  }
}
