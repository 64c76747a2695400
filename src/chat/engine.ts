import { AppError } from "../errors/app-error.js";
import { newId, randomBase62 } from "../infra/ids.js";
import { holdMicros, costMicros, priceFor, promptParams } from "../billing/prices.js";
import { chargeBeyondHold, placeHold, type CallTags } from "../billing/ledger.js";
import {
  callModel,
  ClientAborted,
  estimateTokens,
  imageCount,
  IMAGE_HOLD_TOKENS,
  messageText,
  type ChatMessage,
  type FinishReason,
  type ModelOptions,
  type ToolCall,
  type ToolCallDelta,
} from "../providers/index.js";
import { SUPPORTED_MODELS, isSupportedModel } from "../config/models.js";
import { leaseRefused, releaseLease, renewLease, threadBusy } from "../threads/store.js";
import { finishTurn, type TurnFinishWith } from "../threads/finish.js";
import type { Runtime } from "../runtime/runtime.js";
import type { AgentInfo } from "../agents/agent-info.js";
import { keyRefusal, keySpendLimitExceeded } from "../keys/refusal.js";
import { enforceRateLimit, type RateLimitState } from "./rate-limit.js";
import { checkToolResults, leadingToolResultIds, parseChatRequest } from "./request.js";
import { openContinuation, openThreadWithHold, type TurnOpenWith } from "./store.js";
import { callWithFallbacks, ExtraHolds, fallbackChainFor, type Attempt } from "./fallback.js";

/**
 * One chat turn, independent of HTTP: model choice, thread lease and history, hold, upstream
 * call, then save + settle. Used by the chat route (with streaming hooks) and by webhook runs
 * (`runChatTurn`).
 */

export type { AgentInfo };

export interface TurnInput {
  agent: AgentInfo;
  threadId?: string | null;
  model?: string | null;
  messages: ChatMessage[];
  maxTokens?: number;
  /** Generation options (tools, response format, sampling), already checked for the model. */
  options?: ModelOptions;
  /** System text for this turn only (the Responses API's `instructions`): sent, not stored. */
  instructions?: string;
  /** The turn's id (also the ledger reference); chatcmpl-… when not given. */
  id?: string;
  /** How the call id of request message i is named in errors (chat: messages[i].tool_call_id; responses: input[k].call_id). */
  toolResultParam?: (i: number) => string;
  /** The API key the call came with: the hold re-checks it exists (exact revocation). */
  keyId?: string;
  /**
   * Count this turn in the key's rate-limit window (chat API), in the same statement as the hold
   * (and, for a continuation, the lease). `onState` sees the window (for the response headers)
   * before a 429 is thrown.
   */
  rateLimit?: { keyId: string; limit: number; onState?: (s: RateLimitState) => void };
  /** The run this turn belongs to (webhook runs): recorded on the call's ledger rows. */
  run?: { jobId: string; triggerId: string | null };
}

export interface TurnHooks {
  stream?: boolean;
  /** Called once the turn is accepted (thread leased, hold placed), before the upstream call. */
  onStart?: (info: { id: string; threadId: string; model: string }) => void;
  onDelta?: (text: string) => void;
  onToolCall?: (delta: ToolCallDelta) => void;
  signal?: AbortSignal;
  /**
   * Writes of the caller's that commit with the answered turn's finish, in its statement (A2A: the
   * task's end, without a commit of its own). Asked for once the answer is known; never throws.
   */
  finishWith?: (answer: { content: string; aborted: boolean }) => Promise<TurnFinishWith | undefined>;
  /** What the caller writes with the turn's open, in its statement, when the hold is placed (chat/store.ts `OpenExtension`). */
  openWith?: TurnOpenWith;
}

export interface TurnResult {
  id: string;
  threadId: string;
  model: string;
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  costMicros: number;
  /** True when the client went away mid-answer (the partial answer was saved and billed). */
  aborted: boolean;
  /** Every model tried, in order; more than one when a fallback answered (chat/fallback.ts). */
  attempts: Attempt[];
}

export function chooseModel(agent: AgentInfo, requested: string | null | undefined): string {
  const model = requested ?? agent.defaultModel;
  if (!isSupportedModel(model)) {
    throw new AppError("model_not_found", `The model \`${model}\` does not exist; supported models: ${SUPPORTED_MODELS.join(", ")}`, { param: "model" });
  }
  if (agent.allowedModels && !agent.allowedModels.includes(model)) {
    throw new AppError("model_not_found", `The model \`${model}\` is not allowed for this agent; allowed: ${agent.allowedModels.join(", ")}`, { param: "model" });
  }
  return model;
}

export async function loadAgent(runtime: Runtime, accountId: string, agentId: string): Promise<AgentInfo> {
  const { rows } = await runtime.pool.query<{ instructions: string; default_model: string; allowed_models: string[] | null; fallback_models: string[] | null }>(
    "select instructions, default_model, allowed_models, fallback_models from agents where id = $1 and account_id = $2",
    [agentId, accountId],
  );
  const row = rows[0];
  if (!row) throw new AppError("not_found", `Agent ${agentId} not found`);
  return { id: agentId, accountId, instructions: row.instructions, defaultModel: row.default_model, allowedModels: row.allowed_models, fallbackModels: row.fallback_models };
}

/** Why a hold was refused: the key's spend limit (`keyLimited`, from the hold statement), the key deleted or expired meanwhile, or the balance. */
async function refusal(runtime: Runtime, keyId: string | undefined, keyLimited: boolean): Promise<AppError> {
  if (keyLimited) return keySpendLimitExceeded();
  if (keyId) {
    const refused = await keyRefusal(runtime.pool, keyId);
    if (refused) return refused;
  }
  return new AppError("insufficient_balance", "Insufficient balance: top up the account to continue");
}

/**
 * How long a turn holds its thread: every upstream attempt of every model it may try (the model
 * and its fallbacks) at its timeout, plus a margin for the database work around the calls. Once it
 * has passed, the turn counts as dead and the reclaim settles it (threads/store.ts
 * `reclaimExpiredTurns`), so it must not pass while a fallback is still being tried.
 */
function turnLeaseMs(config: Runtime["config"], models: number): number {
  return models * config.providers.timeoutMs * (config.providers.maxRetries + 1) + 10_000;
}

export async function executeTurn(runtime: Runtime, input: TurnInput, hooks: TurnHooks = {}): Promise<TurnResult> {
  const { config, pool } = runtime;
  const { agent } = input;
  const model = chooseModel(agent, input.model);
  // The model that answers: `model`, or a fallback when its upstream failed (fallback.ts).
  let answering = model;
  const maxTokens = input.maxTokens ?? config.providers.defaultMaxOutputTokens;
  const price = priceFor(config, model);
  const id = input.id ?? `chatcmpl-${randomBase62(18)}`;
  const leaseMs = turnLeaseMs(config, 1 + (agent.fallbackModels?.length ?? 0));
  const system: ChatMessage[] = agent.instructions ? [{ role: "system", content: agent.instructions }] : [];
  if (input.instructions) system.push({ role: "system", content: input.instructions });
  // The hold covers the prompt as sent: texts, tool calls, tool definitions, images (a bounded count each).
  const toolsText = input.options?.tools?.length ? JSON.stringify(input.options.tools) : "";
  const tags = (threadId: string): CallTags => ({
    agentId: agent.id,
    keyId: input.keyId ?? null,
    threadId,
    triggerId: input.run?.triggerId ?? null,
    jobId: input.run?.jobId ?? null,
    model: answering,
  });
  const promptTexts = (messages: ChatMessage[]) => [...messages.map((m) => ({ content: messageText(m) })), { content: toolsText }];
  const holdFor = (messages: ChatMessage[], p = price) => holdMicros(p, promptTexts(messages), maxTokens, imageCount(messages) * IMAGE_HOLD_TOKENS);

  let threadId: string;
  let baseSeq = 0;
  let upstreamMessages: ChatMessage[];
  let hold: number;
  if (input.threadId) {
    threadId = input.threadId;
    const rl = input.rateLimit;
    const request = [...system, ...input.messages];
    // One statement: count, lease + history, hold sized on that history (chat/store.ts).
    const open = (rateLimit?: { keyId: string; limit: number }) =>
      openContinuation(pool, {
        threadId,
        accountId: agent.accountId,
        agentId: agent.id,
        leaseMs,
        turnId: id,
        tags: tags(threadId),
        prompt: promptParams(price, promptTexts(request), maxTokens, imageCount(request) * IMAGE_HOLD_TOKENS),
        imageHoldTokens: IMAGE_HOLD_TOKENS,
        toolResultIds: leadingToolResultIds(input.messages),
        rateLimit,
      }, hooks.openWith);
    let opened = await open(rl && { keyId: rl.keyId, limit: rl.limit });
    if (rl && opened.rateLimit) enforceRateLimit(rl.limit, opened.rateLimit, opened.rateLimit.now, rl.onState);
    if (!opened.leased) {
      // Not found (404), busy (409), or held by a dead turn: reclaimed, then leased once more (already counted).
      await leaseRefused(pool, { threadId, accountId: agent.accountId, agentId: agent.id }, runtime.turnReclaim);
      opened = await open();
      if (!opened.leased) throw threadBusy();
    }
    if (!opened.complete) {
      // The lease waited for the previous turn's finish and the history predates it: the lease is
      // given back and taken again, with a snapshot that has that turn's messages.
      await releaseLease(pool, threadId, id);
      opened = await open();
      if (!opened.leased || !opened.complete) {
        if (opened.leased) await releaseLease(pool, threadId, id).catch(() => {});
        throw threadBusy();
      }
    }
    baseSeq = opened.messageCount;
    upstreamMessages = [...system, ...opened.history, ...input.messages];
    hold = opened.hold;
    let held = opened.ok;
    let keyLimited = opened.keyLimited;
    try {
      // Tool results that continue the thread answer the calls stored in it (400 before 402).
      checkToolResults([...opened.history, ...input.messages], opened.history.length, input.toolResultParam ?? ((i) => `messages[${i}].tool_call_id`));
      // The statement's own check of the tool results refused the hold where this one passes: hold now.
      if (!held && !opened.toolResultsOk) ({ ok: held, keyLimited } = await placeHold(pool, agent.accountId, hold, id, tags(threadId)));
    } catch (err) {
      if (held) await finishTurn(pool, { threadId, accountId: agent.accountId, baseSeq, messages: [], release: hold, reference: id, tags: tags(threadId), inputTokens: 0, outputTokens: 0 }).catch(() => {});
      else await releaseLease(pool, threadId, id).catch(() => {});
      throw err;
    }
    if (!held) {
      await releaseLease(pool, threadId, id).catch(() => {});
      throw await refusal(runtime, input.keyId, keyLimited);
    }
  } else {
    threadId = newId("thr");
    upstreamMessages = [...system, ...input.messages];
    hold = holdFor(upstreamMessages);
    const rl = input.rateLimit;
    const opened = await openThreadWithHold(pool, {
      threadId,
      accountId: agent.accountId,
      agentId: agent.id,
      hold,
      reference: id,
      tags: tags(threadId),
      leaseMs,
      rateLimit: rl && { keyId: rl.keyId, limit: rl.limit },
    }, hooks.openWith);
    if (rl && opened.rateLimit) enforceRateLimit(rl.limit, opened.rateLimit, opened.rateLimit.now, rl.onState);
    if (!opened.ok) throw await refusal(runtime, input.keyId, opened.keyLimited);
  }

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
  const extraHolds = new ExtraHolds(pool, agent.accountId, hold, id, () => tags(threadId));
  let attempts: Attempt[] = [{ model }];
  try {
    const called = await callWithFallbacks(runtime, {
      chain: fallbackChainFor(config, agent, model, input.options ?? {}, input.messages),
      progress,
      turnId: id,
      beforeFallback: async (next) => {
        const refused = await extraHolds.cover(holdFor(upstreamMessages, priceFor(config, next)));
        if (refused) throw await refusal(runtime, input.keyId, refused.keyLimited);
      },
      call: (m) => {
        answering = m;
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
      // Nothing was produced, or nothing of it reached the client (a turn that was not streamed,
      // cut by a graceful stop): hand the whole hold back and free the thread; store nothing.
      await extraHolds.settle(0).catch((e) => runtime.log.error({ err: e, threadId }, "failed to release a fallback hold"));
      await finishTurn(pool, { threadId, accountId: agent.accountId, baseSeq, messages: [], release: hold, reference: id, tags: tags(threadId), inputTokens: 0, outputTokens: 0 }).catch((e) =>
        runtime.log.error({ err: e, threadId }, "failed to release a turn"),
      );
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

  const cost = costMicros(priceFor(config, answering), promptTokens, completionTokens);
  let charged = cost;
  let release = hold - cost;
  await extraHolds.settle(cost);
  if (cost > extraHolds.total) charged = await chargeBeyondHold(pool, agent.accountId, extraHolds.total, cost, id, tags(threadId));
  if (release < 0) release = 0;
  await finishTurn(pool, {
    threadId,
    accountId: agent.accountId,
    baseSeq,
    messages: [...input.messages, { role: "assistant", content, ...(toolCalls.length ? { toolCalls } : {}) }],
    release,
    reference: id,
    tags: tags(threadId),
    inputTokens: promptTokens,
    outputTokens: completionTokens,
  }, await hooks.finishWith?.({ content, aborted }));
  return {
    id,
    threadId,
    model: answering,
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
