import type { Config } from "../config/config.js";
import type { Metrics } from "../infra/metrics.js";
import { AppError } from "../errors/app-error.js";
import { estimateTokens } from "./mapping.js";
import { parseOpenAiChunk, openAiCompatibleRequest } from "./openai-compatible.js";
import { parseProviderAChunk, parseProviderAResponse, providerAPath, providerARequest } from "./provider-a.js";
import { applyProviderBEvent, parseProviderBResponse, providerBRequest, type ProviderBStreamState } from "./provider-b.js";
import { resolveRoute, type Route } from "./routing.js";
import { simulate } from "./simulator.js";
import type { CallOptions, FinishReason, ModelRequest, ModelResult, Progress } from "./types.js";
import { ClientAborted, callUpstream, parseJson, readSse } from "./upstream-http.js";

export { ClientAborted } from "./upstream-http.js";
export { providersMode, resolveRoute } from "./routing.js";
export type * from "./types.js";

/**
 * Calls the model behind a gateway model id. Streams deltas through `onDelta` when `stream`;
 * keeps `progress` current so an aborted call can still be saved and billed. Throws AppError
 * upstream_* on failure, ClientAborted when `signal` fired.
 */
export async function callModel(config: Config, metrics: Metrics | undefined, req: ModelRequest, options: CallOptions): Promise<ModelResult> {
  const route = resolveRoute(config, req.model);
  const progress: Progress = options.progress ?? { text: "", emitted: false };
  const opts = { ...options, progress };
  if (route.kind === "simulator") {
    const result = await simulate(req, opts);
    if (options.signal?.aborted) throw new ClientAborted();
    return result;
  }
  let finishReason: FinishReason | undefined;
  const emit = (text: string) => {
    if (!text) return;
    progress.text += text;
    progress.emitted = true;
    options.onDelta?.(text);
  };
  const setUsage = (prompt: number | undefined, completion: number | undefined) => {
    if (prompt !== undefined) progress.promptTokens = prompt;
    if (completion !== undefined) progress.completionTokens = completion;
  };
  const { url, headers, body } = wire(route, req, options.stream);
  await callUpstream({
    provider: route.kind,
    url,
    headers,
    body,
    timeoutMs: config.providers.timeoutMs,
    maxRetries: config.providers.maxRetries,
    signal: options.signal,
    canRetry: () => !progress.emitted,
    observe: (outcome, seconds) => metrics?.upstreamDuration.observe({ provider: route.kind, outcome }, seconds),
    handle: async (res) => {
      // A retried attempt starts from scratch (nothing was emitted, or we would not retry).
      progress.text = "";
      if (!options.stream) {
        const text = await res.text();
        if (route.kind === "provider_a") {
          const r = parseProviderAResponse(text);
          progress.text = r.text;
          finishReason = r.finishReason;
          setUsage(r.promptTokens, r.completionTokens);
        } else if (route.kind === "provider_b") {
          const r = parseProviderBResponse(parseJson(text, route.kind));
          progress.text = r.text;
          finishReason = r.finishReason;
          setUsage(r.promptTokens, r.completionTokens);
        } else {
          const r = parseOpenAiChunk(parseJson(text, route.kind));
          progress.text = r.text;
          finishReason = r.finishReason;
          setUsage(r.promptTokens, r.completionTokens);
        }
        return;
      }
      if (!res.body) throw new AppError("upstream_error", `The ${route.kind} upstream sent no body`);
      const bState: ProviderBStreamState = { done: false };
      for await (const ev of readSse(res.body)) {
        if (route.kind === "provider_b") {
          emit(applyProviderBEvent(bState, ev.event, parseJson(ev.data, route.kind)));
          if (bState.finishReason) finishReason = bState.finishReason;
          setUsage(bState.promptTokens, bState.completionTokens);
          if (bState.done) break;
        } else {
          if (ev.data === "[DONE]") break;
          const data = parseJson(ev.data, route.kind);
          if (data?.error) throw new AppError("upstream_error", `The ${route.kind} upstream reported an error mid-stream`);
          const r = route.kind === "provider_a" ? parseProviderAChunk(data) : parseOpenAiChunk(data);
          emit(r.text);
          if (r.finishReason) finishReason = r.finishReason;
          setUsage(r.promptTokens, r.completionTokens);
        }
      }
    },
  }).catch((err) => {
    // A stream that broke after the first byte cannot be retried; surface it as a plain upstream error.
    if (err instanceof AppError || err instanceof ClientAborted) throw err;
    throw new AppError("upstream_error", `The ${route.kind} upstream stream failed`);
  });
  return {
    content: progress.text,
    finishReason: finishReason ?? "stop",
    usage: {
      promptTokens: progress.promptTokens ?? estimateTokens(req.messages.map((m) => m.content).join("\n")),
      completionTokens: progress.completionTokens ?? estimateTokens(progress.text),
    },
  };
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
