import type pg from "pg";
import { costMicros, priceFor } from "../billing/prices.js";
import { chargeBeyondHold } from "../billing/ledger.js";
import type { ToolCall } from "../providers/index.js";
import { finishTurn } from "../threads/finish.js";
import type { Runtime } from "../runtime/runtime.js";
import type { ExtraHolds } from "./fallback.js";
import type { OpenedTurn, TurnHooks, TurnInput, TurnPlan } from "./turn.js";

/**
 * A turn's finish, after the upstream call: its messages saved, what it cost settled against its
 * holds, its lease released (threads/finish.ts, one statement); or, when nothing reached the
 * client, the whole hold handed back.
 */

/** What the upstream produced (or, cut mid-answer, what reached the client). */
export interface TurnAnswer {
  content: string;
  toolCalls: ToolCall[];
  aborted: boolean;
  promptTokens: number;
  completionTokens: number;
}

/** Frees the thread and hands the main hold back whole; nothing is stored. */
export function giveBackTurn(pool: pg.Pool, accountId: string, plan: TurnPlan, turn: OpenedTurn): Promise<void> {
  const { threadId, baseSeq, hold } = turn;
  return finishTurn(pool, { threadId, accountId, baseSeq, messages: [], release: hold, reference: plan.id, tags: plan.tags(threadId), inputTokens: 0, outputTokens: 0 });
}

/**
 * Nothing was produced, or nothing of it reached the client (a turn that was not streamed, cut by
 * a graceful stop): every hold back, the thread free, nothing stored. Failures are logged: the
 * caller is already failing with the upstream's error.
 */
export async function abandonTurn(runtime: Runtime, accountId: string, plan: TurnPlan, turn: OpenedTurn, extraHolds: ExtraHolds): Promise<void> {
  const { threadId } = turn;
  await extraHolds.settle(0).catch((e) => runtime.log.error({ err: e, threadId }, "failed to release a fallback hold"));
  await giveBackTurn(runtime.pool, accountId, plan, turn).catch((e) => runtime.log.error({ err: e, threadId }, "failed to release a turn"));
}

/**
 * Saves the turn (the request's messages and the answer), charges what it cost (at the answering
 * model's price) against the main and extra holds, beyond them when it cost more, credits the
 * rest and releases the lease. Returns what was charged.
 */
export async function settleTurn(runtime: Runtime, plan: TurnPlan, input: TurnInput, hooks: TurnHooks, turn: OpenedTurn, extraHolds: ExtraHolds, answer: TurnAnswer): Promise<number> {
  const { config, pool } = runtime;
  const { accountId } = input.agent;
  const { threadId, hold } = turn;
  const { content, toolCalls, aborted, promptTokens, completionTokens } = answer;
  const cost = costMicros(priceFor(config, plan.answering), promptTokens, completionTokens);
  let charged = cost;
  let release = hold - cost;
  await extraHolds.settle(cost);
  if (cost > extraHolds.total) charged = await chargeBeyondHold(pool, accountId, extraHolds.total, cost, plan.id, plan.tags(threadId));
  if (release < 0) release = 0;
  await finishTurn(pool, {
    threadId,
    accountId,
    baseSeq: turn.baseSeq,
    messages: [...input.messages, { role: "assistant", content, ...(toolCalls.length ? { toolCalls } : {}) }],
    release,
    reference: plan.id,
    tags: plan.tags(threadId),
    inputTokens: promptTokens,
    outputTokens: completionTokens,
  }, await hooks.finishWith?.({ content, aborted }));
  return charged;
}
