import type { Config } from "../config/config.js";
import type { Metrics } from "../infra/metrics.js";
import { AppError } from "../errors/app-error.js";
import { storableText } from "../infra/text.js";
import { estimateTokens, messageText } from "./mapping.js";
import { parseOpenAiChunk, openAiCompatibleRequest } from "./openai-compatible.js";
import { parseProviderAChunk, parseProviderAResponse, providerAPath, providerARequest } from "./provider-a.js";
import { applyProviderBEvent, parseProviderBResponse, providerBRequest, type ProviderBStreamState } from "./provider-b.js";
import { resolveRoute, type Route } from "./routing.js";
import { breakerFor } from "./breaker.js";
import { simulate } from "./simulator.js";
import type { CallOptions, FinishReason, ModelRequest, ModelResult, Progress, ToolCall, ToolCallDelta } from "./types.js";
import { ClientAborted, callUpstream, parseJson, readSse } from "./upstream-http.js";

export { ClientAborted } from "./upstream-http.js";
export { providersMode, resolveRoute } from "./routing.js";
export { checkModelOptions } from "./limits.js";
export { breakerFor, type CircuitState } from "./breaker.js";
export { estimateTokens, imageCount, messageText, IMAGE_HOLD_TOKENS } from "./mapping.js";
export type * from "./types.js";

/**
 * Calls the model behind a gateway model id. Streams text through `onDelta` and function-call
 * pieces through `onToolCall` when `stream`; keeps `progress` current so an aborted call can still
 * be saved and billed. Throws AppError upstream_* on failure (invalid_request_error for an upstream
 * 4xx), ClientAborted when `signal` fired.
 */
export async function callModel(config: Config, metrics: Metrics | undefined, req: ModelRequest, options: CallOptions): Promise<ModelResult> {
  const route = resolveRoute(config, req.model);
  const progress: Progress = options.progress ?? { text: "", toolCalls: [], emitted: false };
  const opts = { ...options, progress };
  if (route.kind === "simulator") {
    const result = await simulate(req, opts);
    if (options.signal?.aborted) throw new ClientAborted();
    return result;
  }
  let finishReason: FinishReason | undefined;
  // What the upstream returns is made storable (no NUL, no unpaired surrogate: infra/text.ts) as
  // it arrives, so the stream, the answer and the thread all carry the same text, and the finish
  // that saves it cannot fail after the model was paid for.
  const emit = (raw: string) => {
    if (!raw) return;
    const text = storableText(raw);
    progress.text += text;
    progress.emitted = true;
    options.onDelta?.(text);
  };
  // parallel_tool_calls: false on a provider without such a switch: the first call is kept.
  const single = req.parallelToolCalls === false;
  const emitTool = (raw: ToolCallDelta) => {
    if (single && raw.index > 0) return;
    const d = storableCall(raw);
    let call = progress.toolCalls[d.index];
    if (!call) call = progress.toolCalls[d.index] = { id: d.id ?? "", name: d.name ?? "", arguments: "" };
    if (d.id) call.id = d.id;
    if (d.name) call.name = d.name;
    call.arguments += d.arguments;
    progress.emitted = true;
    options.onToolCall?.(d);
  };
  const emitWhole = (calls: ToolCall[] | undefined) => {
    for (const c of calls ?? []) {
      const index = progress.toolCalls.length;
      emitTool({ index, id: c.id, name: c.name, arguments: c.arguments });
      const kept = progress.toolCalls[index];
      if (kept && c.signature) kept.signature = c.signature;
    }
  };
  const setUsage = (prompt: number | undefined, completion: number | undefined) => {
    if (prompt !== undefined) progress.promptTokens = prompt;
    if (completion !== undefined) progress.completionTokens = completion;
  };
  const breaker = breakerFor(config, metrics, req.model);
  if (breaker && !breaker.allow()) {
    throw new AppError("upstream_unavailable", `The upstream of ${req.model} is failing; calls skip it for now (circuit breaker open)`);
  }
  const { url, headers, body } = wire(route, req, options.stream);
  await callUpstream({
    provider: route.kind,
    url,
    headers,
    body,
    secrets: route.apiKey ? [route.apiKey] : [],
    timeoutMs: config.providers.timeoutMs,
    maxRetries: config.providers.maxRetries,
    signal: options.signal,
    canRetry: () => !progress.emitted,
    observe: (outcome, seconds) => metrics?.upstreamDuration.observe({ provider: route.kind, outcome }, seconds),
    handle: async (res) => {
      // A retried attempt starts from scratch (nothing was emitted, or we would not retry).
      progress.text = "";
      progress.toolCalls = [];
      if (!options.stream) {
        const text = await res.text();
        const r =
          route.kind === "provider_a"
            ? parseProviderAResponse(text)
            : route.kind === "provider_b"
              ? parseProviderBResponse(parseJson(text, route.kind))
              : parseOpenAiChunk(parseJson(text, route.kind));
        progress.text = storableText(r.text);
        progress.toolCalls = (single ? (r.toolCalls ?? []).slice(0, 1) : (r.toolCalls ?? [])).map(storableCall);
        finishReason = r.finishReason;
        setUsage(r.promptTokens, r.completionTokens);
        return;
      }
      const bState: ProviderBStreamState = { done: false };
      for await (const ev of readSse(res.body)) {
        if (route.kind === "provider_b") {
          emit(applyProviderBEvent(bState, ev.event, parseJson(ev.data, route.kind), emitTool));
          if (bState.finishReason) finishReason = bState.finishReason;
          setUsage(bState.promptTokens, bState.completionTokens);
          if (bState.done) break;
          continue;
        }
        if (ev.data === "[DONE]") break;
        const data = parseJson(ev.data, route.kind);
        if (data?.error) {
          const message = typeof data.error?.message === "string" ? `: ${data.error.message.slice(0, 300)}` : "";
          throw new AppError("upstream_error", `The ${route.kind} upstream reported an error mid-stream${message}`);
        }
        if (route.kind === "provider_a") {
          const r = parseProviderAChunk(data);
          emit(r.text);
          emitWhole(r.toolCalls);
          if (r.finishReason) finishReason = r.finishReason;
          setUsage(r.promptTokens, r.completionTokens);
        } else {
          const r = parseOpenAiChunk(data);
          emit(r.text);
          for (const d of r.toolDeltas ?? []) emitTool(d);
          if (r.finishReason) finishReason = r.finishReason;
          setUsage(r.promptTokens, r.completionTokens);
        }
      }
    },
  }).then(
    () => breaker?.success(),
    (err: unknown) => {
      if (isUpstreamFailure(err)) breaker?.failure();
      else breaker?.release();
      throw err;
    },
  );
  const toolCalls = progress.toolCalls.filter(Boolean);
  if (toolCalls.length && (finishReason === undefined || finishReason === "stop")) finishReason = "tool_calls";
  return {
    content: progress.text,
    toolCalls,
    finishReason: finishReason ?? "stop",
    usage: {
      promptTokens: progress.promptTokens ?? estimateTokens(req.messages.map(messageText).join("\n")),
      completionTokens: progress.completionTokens ?? estimateTokens(progress.text + toolCalls.map((c) => c.name + c.arguments).join("")),
    },
  };
}

/** A tool call (or a piece of one) with storable id, name and arguments. */
function storableCall<T extends { id?: string; name?: string; arguments: string }>(c: T): T {
  return {
    ...c,
    arguments: storableText(c.arguments),
    ...(c.id !== undefined ? { id: storableText(c.id) } : {}),
    ...(c.name !== undefined ? { name: storableText(c.name) } : {}),
  };
}

/**
 * An error that says the upstream is unwell, not that the request is wrong: unreachable, timed
 * out, 429, 5xx, broken answers (after the call's retries). Not a refusal of the gateway's own
 * credentials (401/403: configuration, which another attempt will not fix) nor a client abort.
 */
export function isUpstreamFailure(err: unknown): boolean {
  if (!(err instanceof AppError) || !err.code.startsWith("upstream_")) return false;
  const status = err.details.upstream_status;
  return status !== 401 && status !== 403;
}

function wire(route: Exclude<Route, { kind: "simulator" }>, req: ModelRequest, stream: boolean) {
  switch (route.kind) {
    case "provider_a":
      return { url: `${route.baseUrl}${providerAPath(route.upstreamModel, stream)}`, headers: { "x-goog-api-key": route.apiKey }, body: providerARequest(req) };
    case "provider_b":
      return {
        url: `${route.baseUrl}/v1/messages`,
        headers: { "x-api-key": route.apiKey, "anthropic-version": "2023-06-01" },
        body: providerBRequest(req, route.upstreamModel, stream),
      };
    case "openai_compatible":
      return {
        url: `${route.baseUrl}/chat/completions`,
        headers: route.apiKey ? { authorization: `Bearer ${route.apiKey}` } : ({} as Record<string, string>),
        body: openAiCompatibleRequest(req, route.upstreamModel, stream),
      };
  }
}
