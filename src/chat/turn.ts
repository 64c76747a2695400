import { AppError } from "../errors/app-error.js";
import { randomBase62 } from "../infra/ids.js";
import { holdMicros, priceFor, type Price } from "../billing/prices.js";
import type { CallTags } from "../billing/ledger.js";
import { imageCount, IMAGE_HOLD_TOKENS, messageText, type ChatMessage, type FinishReason, type ModelOptions, type ToolCall, type ToolCallDelta } from "../providers/index.js";
import { SUPPORTED_MODELS, isSupportedModel } from "../config/models.js";
import type { TurnFinishWith } from "../threads/finish.js";
import type { Runtime } from "../runtime/runtime.js";
import type { AgentInfo } from "../agents/agent-info.js";
import type { RateLimitState } from "./rate-limit.js";
import type { TurnOpenWith } from "./store.js";
import type { Attempt } from "./fallback.js";

/**
 * What a chat turn takes, gives and decides before it starts (engine.ts runs it: turn-open.ts,
 * the upstream call, turn-finish.ts).
 */

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

/** What a turn decided before it opened: its id, model, price, lease and how it sizes holds. */
export interface TurnPlan {
  id: string;
  /** The model asked for (or the agent's default). */
  model: string;
  /** The model that answers: `model`, or a fallback when its upstream failed (fallback.ts). */
  answering: string;
  maxTokens: number;
  price: Price;
  leaseMs: number;
  /** The agent's instructions and the turn's own: sent first, never stored. */
  system: ChatMessage[];
  /** The ledger tags of the turn's rows (their model: the answering one). */
  tags: (threadId: string) => CallTags;
  /** The prompt as the hold counts it: texts, tool calls, tool definitions. */
  promptTexts: (messages: ChatMessage[]) => { content: string }[];
  /** The hold for these messages at price `p` (images a bounded count each). */
  holdFor: (messages: ChatMessage[], p?: Price) => number;
}

/** An opened turn: its thread leased, its hold placed, the messages the upstream gets. */
export interface OpenedTurn {
  threadId: string;
  /** The thread's message count before this turn: its messages are saved after it. */
  baseSeq: number;
  upstreamMessages: ChatMessage[];
  hold: number;
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

/**
 * How long a turn holds its thread: every upstream attempt of every model it may try (the model
 * and its fallbacks) at its timeout, plus a margin for the database work around the calls. Once it
 * has passed, the turn counts as dead and the reclaim settles it (threads/store.ts
 * `reclaimExpiredTurns`), so it must not pass while a fallback is still being tried.
 */
function turnLeaseMs(config: Runtime["config"], models: number): number {
  return models * config.providers.timeoutMs * (config.providers.maxRetries + 1) + 10_000;
}

export function planTurn(config: Runtime["config"], input: TurnInput): TurnPlan {
  const { agent } = input;
  const model = chooseModel(agent, input.model);
  const maxTokens = input.maxTokens ?? config.providers.defaultMaxOutputTokens;
  const price = priceFor(config, model);
  const system: ChatMessage[] = agent.instructions ? [{ role: "system", content: agent.instructions }] : [];
  if (input.instructions) system.push({ role: "system", content: input.instructions });
  // The hold covers the prompt as sent: texts, tool calls, tool definitions, images (a bounded count each).
  const toolsText = input.options?.tools?.length ? JSON.stringify(input.options.tools) : "";
  const promptTexts = (messages: ChatMessage[]) => [...messages.map((m) => ({ content: messageText(m) })), { content: toolsText }];
  const plan: TurnPlan = {
    id: input.id ?? `chatcmpl-${randomBase62(18)}`,
    model,
    answering: model,
    maxTokens,
    price,
    leaseMs: turnLeaseMs(config, 1 + (agent.fallbackModels?.length ?? 0)),
    system,
    tags: (threadId) => ({
      agentId: agent.id,
      keyId: input.keyId ?? null,
      threadId,
      triggerId: input.run?.triggerId ?? null,
      jobId: input.run?.jobId ?? null,
      model: plan.answering,
    }),
    promptTexts,
    holdFor: (messages, p = price) => holdMicros(p, promptTexts(messages), maxTokens, imageCount(messages) * IMAGE_HOLD_TOKENS),
  };
  return plan;
}
