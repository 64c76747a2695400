import type pg from "pg";
import { trace } from "@opentelemetry/api";
import { isSupportedModel } from "../config/models.js";
import type { Config } from "../config/config.js";
import type { AgentInfo } from "../agents/agent-info.js";
import { placeHold, settleHold, type CallTags } from "../billing/ledger.js";
import { checkModelOptions, isUpstreamFailure, type ChatMessage, type ModelOptions, type ModelResult, type Progress } from "../providers/index.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * Model fallbacks (docs/guides/chat.md): a turn whose model fails upstream (after its own retries, or at
 * once while its circuit breaker is open) before anything reached the client is tried on the
 * agent's next fallback model. Each attempt is a span event of the request's trace, a log line
 * and, when a fallback answers, a `model_fallbacks_total` count.
 */

/**
 * The chosen model, then the agent's fallbacks still supported and allowed, each once, that take
 * the request as it is (`accepts`: e.g. provider_b refuses a temperature above 1, so a request with
 * one does not fall back to it: the client gets the chosen model's failure, not a 400 it never caused).
 */
export function fallbackChain(agent: AgentInfo, model: string, accepts: (model: string) => boolean = () => true): string[] {
  const rest = (agent.fallbackModels ?? []).filter((m) => m !== model && isSupportedModel(m) && (!agent.allowedModels || agent.allowedModels.includes(m)) && accepts(m));
  return [model, ...new Set(rest)];
}

/** The chain for a request: fallbacks that would refuse its options or images (checkModelOptions) are left out. */
export function fallbackChainFor(config: Config, agent: AgentInfo, model: string, options: ModelOptions, messages: ChatMessage[]): string[] {
  return fallbackChain(agent, model, (m) => {
    try {
      checkModelOptions(config, m, options, messages, () => "");
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The extra holds of a turn whose fallback model is dearer than the held worst case: each tops
 * the turn's hold up to what the next model needs, under its own ledger reference (`<id>~n`), and
 * all are settled with the turn: what the answer cost beyond the main hold is kept, the rest
 * handed back.
 */
export class ExtraHolds {
  private readonly holds: { reference: string; amount: number }[] = [];
  /** The main hold plus every extra hold. */
  total: number;

  constructor(
    private readonly pool: pg.Pool,
    private readonly accountId: string,
    private readonly mainHold: number,
    private readonly turnId: string,
    private readonly tags: () => CallTags,
  ) {
    this.total = mainHold;
  }

  /** Holds what `needed` adds to the total; undefined when done, else why it was refused. */
  async cover(needed: number): Promise<{ keyLimited: boolean } | undefined> {
    if (needed <= this.total) return undefined;
    const reference = `${this.turnId}~${this.holds.length + 1}`;
    const placed = await placeHold(this.pool, this.accountId, needed - this.total, reference, this.tags());
    if (!placed.ok) return { keyLimited: placed.keyLimited };
    this.holds.push({ reference, amount: needed - this.total });
    this.total = needed;
    return undefined;
  }

  /** Settles every extra hold for a turn that cost `cost` in all (0: nothing produced). */
  async settle(cost: number): Promise<void> {
    let beyondMain = Math.max(0, cost - this.mainHold);
    for (const h of this.holds) {
      const used = Math.min(beyondMain, h.amount);
      beyondMain -= used;
      await settleHold(this.pool, this.accountId, h.amount - used, h.reference, this.tags());
    }
  }
}

export interface Attempt {
  model: string;
  /** The error code of a failed attempt; absent for the one that answered. */
  error?: string;
}

/**
 * Calls `call(model)` for each model of `chain` until one answers. Moves on only after an
 * upstream failure with nothing emitted (`progress`); `beforeFallback(model)` runs first (the hold
 * is re-sized there, and may refuse). Throws the last failure when every model failed.
 */
export async function callWithFallbacks(
  runtime: Runtime,
  a: {
    chain: string[];
    progress: Progress;
    call: (model: string) => Promise<ModelResult>;
    beforeFallback: (model: string) => Promise<void>;
    turnId: string;
  },
): Promise<{ result: ModelResult; model: string; attempts: Attempt[] }> {
  const attempts: Attempt[] = [];
  const span = trace.getActiveSpan();
  for (const [i, model] of a.chain.entries()) {
    if (i > 0) {
      await a.beforeFallback(model);
      a.progress.text = "";
      a.progress.toolCalls = [];
    }
    try {
      const result = await a.call(model);
      attempts.push({ model });
      span?.addEvent("model_attempt", { model, outcome: "ok", attempt: i + 1 });
      if (i > 0) {
        runtime.metrics?.modelFallbacks.inc({ from: a.chain[0]!, to: model });
        runtime.log.warn({ turnId: a.turnId, attempts }, "a fallback model answered");
      }
      return { result, model, attempts };
    } catch (err) {
      const code = (err as { code?: string })?.code ?? "error";
      attempts.push({ model, error: code });
      span?.addEvent("model_attempt", { model, outcome: code, attempt: i + 1 });
      if (!isUpstreamFailure(err) || a.progress.emitted || i === a.chain.length - 1) {
        if (i > 0) runtime.log.warn({ turnId: a.turnId, attempts }, "every model of the turn failed");
        throw err;
      }
    }
  }
  throw new Error("unreachable: empty model chain");
}
