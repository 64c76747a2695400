import { AppError } from "../errors/app-error.js";
import { newId } from "../infra/ids.js";
import { promptParams } from "../billing/prices.js";
import { placeHold } from "../billing/ledger.js";
import { imageCount, IMAGE_HOLD_TOKENS, type ChatMessage } from "../providers/index.js";
import { leaseRefused, releaseLease, threadBusy } from "../threads/store.js";
import type { Runtime } from "../runtime/runtime.js";
import { keyRefusal, keySpendLimitExceeded } from "../keys/refusal.js";
import { enforceRateLimit } from "./rate-limit.js";
import { checkToolResults, leadingToolResultIds } from "./request.js";
import { openContinuation, openThreadWithHold } from "./store.js";
import { giveBackTurn } from "./turn-finish.js";
import type { OpenedTurn, TurnHooks, TurnInput, TurnPlan } from "./turn.js";

/**
 * A turn's open, before any upstream call: the key's rate-limit count, the thread (a new one, or
 * the continued one's lease and history) and the hold, in one statement (chat/store.ts).
 */

/** Why a hold was refused: the key's spend limit (`keyLimited`, from the hold statement), the key deleted or expired meanwhile, or the balance. */
export async function refusal(runtime: Runtime, keyId: string | undefined, keyLimited: boolean): Promise<AppError> {
  if (keyLimited) return keySpendLimitExceeded();
  if (keyId) {
    const refused = await keyRefusal(runtime.pool, keyId);
    if (refused) return refused;
  }
  return new AppError("insufficient_balance", "Insufficient balance: top up the account to continue");
}

export function openTurn(runtime: Runtime, plan: TurnPlan, input: TurnInput, hooks: TurnHooks): Promise<OpenedTurn> {
  return input.threadId ? openContinued(runtime, plan, input, input.threadId, hooks) : openNew(runtime, plan, input, hooks);
}

async function openContinued(runtime: Runtime, plan: TurnPlan, input: TurnInput, threadId: string, hooks: TurnHooks): Promise<OpenedTurn> {
  const { pool } = runtime;
  const { agent } = input;
  const { id, leaseMs, price, maxTokens } = plan;
  const rl = input.rateLimit;
  const request = [...plan.system, ...input.messages];
  // One statement: count, lease + history, hold sized on that history (chat/store.ts).
  const open = (rateLimit?: { keyId: string; limit: number }) =>
    openContinuation(pool, {
      threadId,
      accountId: agent.accountId,
      agentId: agent.id,
      leaseMs,
      turnId: id,
      tags: plan.tags(threadId),
      prompt: promptParams(price, plan.promptTexts(request), maxTokens, imageCount(request) * IMAGE_HOLD_TOKENS),
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
  const turn: OpenedTurn = { threadId, baseSeq: opened.messageCount, upstreamMessages: [...plan.system, ...opened.history, ...input.messages], hold: opened.hold };
  let held = opened.ok;
  let keyLimited = opened.keyLimited;
  try {
    // Tool results that continue the thread answer the calls stored in it (400 before 402).
    checkToolResults([...opened.history, ...input.messages], opened.history.length, input.toolResultParam ?? ((i) => `messages[${i}].tool_call_id`));
    // The statement's own check of the tool results refused the hold where this one passes: hold now.
    if (!held && !opened.toolResultsOk) ({ ok: held, keyLimited } = await placeHold(pool, agent.accountId, turn.hold, id, plan.tags(threadId)));
  } catch (err) {
    if (held) await giveBackTurn(pool, agent.accountId, plan, turn).catch(() => {});
    else await releaseLease(pool, threadId, id).catch(() => {});
    throw err;
  }
  if (!held) {
    await releaseLease(pool, threadId, id).catch(() => {});
    throw await refusal(runtime, input.keyId, keyLimited);
  }
  return turn;
}

async function openNew(runtime: Runtime, plan: TurnPlan, input: TurnInput, hooks: TurnHooks): Promise<OpenedTurn> {
  const { agent } = input;
  const threadId = newId("thr");
  const upstreamMessages: ChatMessage[] = [...plan.system, ...input.messages];
  const hold = plan.holdFor(upstreamMessages);
  const rl = input.rateLimit;
  const opened = await openThreadWithHold(runtime.pool, {
    threadId,
    accountId: agent.accountId,
    agentId: agent.id,
    hold,
    reference: plan.id,
    tags: plan.tags(threadId),
    leaseMs: plan.leaseMs,
    rateLimit: rl && { keyId: rl.keyId, limit: rl.limit },
  }, hooks.openWith);
  if (rl && opened.rateLimit) enforceRateLimit(rl.limit, opened.rateLimit, opened.rateLimit.now, rl.onState);
  if (!opened.ok) throw await refusal(runtime, input.keyId, opened.keyLimited);
  return { threadId, baseSeq: 0, upstreamMessages, hold };
}
