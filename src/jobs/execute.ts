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
  job: { accountId: string; agentId: string },
  agent: { script: string | null },
  payload: unknown,
  execution: Execution,
): Promise<void> {
  if (!agent.script) {
    const r = await runChatTurn(runtime, {
      accountId: job.accountId,
      agentId: job.agentId,
      messages: [{ role: "user", content: JSON.stringify(payload) }],
    });
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
    const r = await runChatTurn(runtime, {
      accountId: job.accountId,
      agentId: job.agentId,
      threadId: execution.threadId,
      model: typeof args.model === "string" ? args.model : null,
      messages: args.messages as { role: "system" | "user" | "assistant"; content: string }[],
      maxTokens: typeof maxTokens === "number" ? maxTokens : undefined,
    }).catch((err: unknown) => {
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
  });
}
