import { AppError } from "../errors/app-error.js";
import { priceFor } from "../billing/prices.js";
import { callModel, ClientAborted, estimateTokens, messageText, type FinishReason, type ToolCall } from "../providers/index.js";
import { renewLease } from "../threads/store.js";
import type { Runtime } from "../runtime/runtime.js";
import type { AgentInfo } from "../agents/agent-info.js";
import { parseChatRequest } from "./request.js";
import { callWithFallbacks, ExtraHolds, fallbackChainFor, type Attempt } from "./fallback.js";
import { planTurn, type TurnHooks, type TurnInput, type TurnResult } from "./turn.js";
import { openTurn, refusal } from "./turn-open.js";
import { abandonTurn, settleTurn } from "./turn-finish.js";

/**
 * One chat turn, independent of HTTP: model choice and hold size (turn.ts), the open: thread
 * lease and history, hold (turn-open.ts), the upstream call with its fallbacks, then the finish:
 * save + settle (turn-finish.ts). Used by the chat route (with streaming hooks) and by webhook
 * runs (`runChatTurn`).
 */

export type { AgentInfo };
export { chooseModel, type TurnHooks, type TurnInput, type TurnResult } from "./turn.js";

export async function loadAgent(runtime: Runtime, accountId: string, agentId: string): Promise<AgentInfo> {
  const { rows } = await runtime.pool.query<{ instructions: string; default_model: string; allowed_models: string[] | null; fallback_models: string[] | null }>(
    "select instructions, default_model, allowed_models, fallback_models from agents where id = $1 and account_id = $2",
    [agentId, accountId],
  );
  const row = rows[0];
  if (!row) throw new AppError("not_found", `Agent ${agentId} not found`);
  return { id: agentId, accountId, instructions: row.instructions, defaultModel: row.default_model, allowedModels: row.allowed_models, fallbackModels: row.fallback_models };
}

export async function executeTurn(runtime: Runtime, input: TurnInput, hooks: TurnHooks = {}): Promise<TurnResult> {
  const { config, pool } = runtime;
  const { agent } = input;
  const plan = planTurn(config, input);
  const { id, model, maxTokens, leaseMs } = plan;
  const turn = await openTurn(runtime, plan, input, hooks);
  const { threadId, upstreamMessages } = turn;

  const progress = { text: "", toolCalls: [] as ToolCall[], emitted: false } as { text: string; toolCalls: ToolCall[]; emitted: boolean; promptTokens?: number; completionTokens?: number };
  let content = "";
  let toolCalls: ToolCall[] = [];
  let finishReason: FinishReason = "stop";
  let promptTokens: number;
  let completionTokens: number;
  let aborted = false;
  // A stream may last longer than any bound (the upstream timeout is an idle timeout): it renews
  // its lease while it runs, so a crashed instance's turn expires within one lease. A non-stream
  // call is bounded by the lease itself, so it never renews (docs/billing-reservations.md).
  const renewal = hooks.stream ? setInterval(() => renewLease(pool, threadId, id, leaseMs).catch(() => {}), leaseMs / 2) : undefined;
  renewal?.unref();
  // A dearer fallback model needs more held (chat/fallback.ts).
  const extraHolds = new ExtraHolds(pool, agent.accountId, turn.hold, id, () => plan.tags(threadId));
  let attempts: Attempt[] = [{ model }];
  try {
    const called = await callWithFallbacks(runtime, {
      chain: fallbackChainFor(config, agent, model, input.options ?? {}, input.messages),
      progress,
      turnId: id,
      beforeFallback: async (next) => {
        const refused = await extraHolds.cover(plan.holdFor(upstreamMessages, priceFor(config, next)));
        if (refused) throw await refusal(runtime, input.keyId, refused.keyLimited);
      },
      call: (m) => {
        plan.answering = m;
        hooks.onStart?.({ id, threadId, model: m });
        return callModel(
          config,
          runtime.metrics,
          { ...input.options, model: m, messages: upstreamMessages, maxTokens },
          { stream: hooks.stream ?? false, onDelta: hooks.onDelta, onToolCall: hooks.onToolCall, signal: hooks.signal, progress },
        );
      },
    });
    const result = called.result;
    attempts = called.attempts;
    clearInterval(renewal);
    content = result.content;
    toolCalls = result.toolCalls;
    finishReason = result.finishReason;
    promptTokens = result.usage.promptTokens;
    completionTokens = result.usage.completionTokens;
  } catch (err) {
    clearInterval(renewal);
    if (!(err instanceof ClientAborted) || !hooks.stream || (progress.text.length === 0 && progress.toolCalls.length === 0)) {
      // Nothing reached the client: every hold back, the thread free, nothing stored.
      await abandonTurn(runtime, agent.accountId, plan, turn, extraHolds);
      throw err;
    }
    // The client went away mid-answer: what was produced is billed; the text is saved, but not
    // tool calls whose arguments may be cut (a half call in the history would break the thread).
    aborted = true;
    content = progress.text;
    const produced = content + progress.toolCalls.map((c) => c.name + c.arguments).join("");
    promptTokens = progress.promptTokens ?? estimateTokens(upstreamMessages.map(messageText).join("\n"));
    completionTokens = Math.max(progress.completionTokens ?? 0, estimateTokens(produced));
  }

  const charged = await settleTurn(runtime, plan, input, hooks, turn, extraHolds, { content, toolCalls, aborted, promptTokens, completionTokens });
  return {
    id,
    threadId,
    model: plan.answering,
    content,
    toolCalls,
    finishReason,
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    costMicros: charged,
    aborted,
    attempts,
  };
}

/**
 * For non-HTTP callers (webhook runs, scripts' ctx.chat): providers + billing + thread
 * persistence, no rate limiting. Throws AppError insufficient_balance, thread_*, model_not_found,
 * upstream_*.
 */
export async function runChatTurn(
  runtime: Runtime,
  req: {
    accountId: string;
    agentId: string;
    threadId?: string | null;
    model?: string | null;
    messages: { role: "system" | "user" | "assistant"; content: string }[];
    maxTokens?: number;
    run?: { jobId: string; triggerId: string | null };
    /** The turn's id (its hold's reference and its lease's holder), when the caller must know it before the turn starts. */
    turnId?: string;
  },
  hooks: Pick<TurnHooks, "onStart"> = {},
): Promise<{
  threadId: string;
  content: string;
  model: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  costMicros: number;
  finishReason: string;
  attempts: Attempt[];
}> {
  // The same validation as the chat API (one set of rules for every caller).
  const parsed = parseChatRequest({ messages: req.messages, max_tokens: req.maxTokens, thread_id: req.threadId });
  const agent = await loadAgent(runtime, req.accountId, req.agentId);
  const r = await executeTurn(runtime, { id: req.turnId, agent, threadId: req.threadId, model: req.model, messages: parsed.messages, maxTokens: parsed.maxTokens, run: req.run }, hooks);
  return { threadId: r.threadId, content: r.content, model: r.model, usage: r.usage, costMicros: r.costMicros, finishReason: r.finishReason, attempts: r.attempts };
}
