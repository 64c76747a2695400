import { trace } from "@opentelemetry/api";
import { isSupportedModel } from "../config/models.js";
import type { AgentInfo } from "../agents/agent-info.js";
import { isUpstreamFailure, type ModelResult, type Progress } from "../providers/index.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * Model fallbacks (DESIGN §19): a turn whose model fails upstream (after its own retries, or at
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
