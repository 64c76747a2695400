import { openAiFinishReason } from "./mapping.js";
import type { FinishReason, ModelRequest } from "./types.js";

/** A local OpenAI-compatible server (vLLM, llama.cpp, Ollama): the request passes through almost as is. */
export function openAiCompatibleRequest(req: ModelRequest, upstreamModel: string, stream: boolean): Record<string, unknown> {
  return {
    model: upstreamModel,
    messages: req.messages,
    max_tokens: req.maxTokens,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.stop?.length ? { stop: req.stop } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

export function parseOpenAiChunk(body: any): { text: string; finishReason?: FinishReason; promptTokens?: number; completionTokens?: number } {
  const choice = body?.choices?.[0];
  const text = choice?.delta?.content ?? choice?.message?.content ?? "";
  return {
    text: typeof text === "string" ? text : "",
    finishReason: openAiFinishReason(choice?.finish_reason),
    promptTokens: body?.usage?.prompt_tokens,
    completionTokens: body?.usage?.completion_tokens,
  };
}
