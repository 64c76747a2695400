import { runChatTurn } from "../chat/engine.js";
import { unavailableError } from "../errors/unavailable.js";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";
import { sandboxPool } from "../sandbox/index.js";

/** What one execution of an agent produced. */
export interface Execution {
  result: unknown;
  threadId: string | null;
  costMicros: number;
  logs: string[];
  modelCalls: { model: string; usage: unknown; costMicros: number }[];
  /** The audit's tools used (BRIEF contract): one item per model call (and, from automation, per HTTP call). */
  toolsUsed: ToolUse[];
}

export interface ToolUse {
  kind: "model" | "http";
  name: string;
  status: string;
  durationMs: number;
  costMicros: number;
}

/** Runs one model call of a run and records it in the tools used, whether it succeeds or not. */
async function usingModel<T extends { model: string; costMicros: number }>(execution: Execution, model: string | null | undefined, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const r = await call();
    execution.toolsUsed.push({ kind: "model", name: r.model, status: "ok", durationMs: Math.round(performance.now() - started), costMicros: r.costMicros });
    return r;
  } catch (err) {
    const status = err instanceof AppError ? err.code : "error";
    execution.toolsUsed.push({ kind: "model", name: model ?? "default", status, durationMs: Math.round(performance.now() - started), costMicros: 0 });
    throw err;
  }
}

const MAX_LOG_LINES = 1000;
const MAX_LOG_LINE = 4000;

interface ChatArgs {
  model?: unknown;
  messages?: unknown;
  maxTokens?: unknown;
  max_tokens?: unknown;
}

/**
 * Runs the agent on a payload: its script in the sandbox, or (no script) the payload as one user
 * message in a new thread. `execution` is filled as the run goes, so a failure still reports the
 * logs and model calls made before it.
 */
export async function executeAgent(
  runtime: Runtime,
  job: { id: string; accountId: string; agentId: string; triggerId: string | null },
  agent: { script: string | null },
  payload: unknown,
  execution: Execution,
  signal?: AbortSignal,
): Promise<void> {
  if (!agent.script) {
    const r = await usingModel(execution, null, () =>
      runChatTurn(runtime, {
        accountId: job.accountId,
        agentId: job.agentId,
        messages: [{ role: "user", content: JSON.stringify(payload) }],
        run: { jobId: job.id, triggerId: job.triggerId },
      }),
    );
    execution.threadId = r.threadId;
    execution.costMicros += r.costMicros;
    execution.modelCalls.push({ model: r.model, usage: r.usage, costMicros: r.costMicros });
    execution.result = { role: "assistant", content: r.content };
    return;
  }

  const log = (line: string) => {
    if (execution.logs.length < MAX_LOG_LINES) execution.logs.push(line.slice(0, MAX_LOG_LINE));
  };
  // Every ctx.chat of one run goes to the same thread, so the run's conversation is kept together.
  const chat = async (raw: unknown) => {
    const args = (raw ?? {}) as ChatArgs;
    if (!Array.isArray(args.messages)) throw new Error("ctx.chat needs { model, messages: [{ role, content }] }");
    const maxTokens = args.maxTokens ?? args.max_tokens;
    const model = typeof args.model === "string" ? args.model : null;
    const r = await usingModel(execution, model, () => runChatTurn(runtime, {
      accountId: job.accountId,
      agentId: job.agentId,
      threadId: execution.threadId,
      model,
      messages: args.messages as { role: "system" | "user" | "assistant"; content: string }[],
      maxTokens: typeof maxTokens === "number" ? maxTokens : undefined,
      run: { jobId: job.id, triggerId: job.triggerId },
    })).catch((err: unknown) => {
      // Request-shape problems are the script's to handle (it can catch them); others abort the run.
      if (err instanceof AppError && ["invalid_request_error", "validation_failed", "model_not_found"].includes(err.code)) throw new Error(err.message);
      // A database outage is no fault of the script: abort the run as retryable (service_unavailable).
      throw unavailableError(err) ?? err;
    });
    execution.threadId = r.threadId;
    execution.costMicros += r.costMicros;
    execution.modelCalls.push({ model: r.model, usage: r.usage, costMicros: r.costMicros });
    return { content: r.content, usage: r.usage, model: r.model };
  };
  execution.result = await sandboxPool(runtime.config).run({
    source: agent.script,
    input: payload,
    limits: runtime.config.sandbox,
    onLog: log,
    host: (_method, args) => chat(args),
    signal,
  });
}
