import { AppError } from "../errors/app-error.js";
import { geminiFinishReason, splitSystem } from "./mapping.js";
import type { FinishReason, ModelRequest } from "./types.js";
import { parseJson } from "./upstream-http.js";

/** Gemini-style generateContent: system → systemInstruction, assistant → model, merged turns. */
export function providerARequest(req: ModelRequest): Record<string, unknown> {
  const { system, turns } = splitSystem(req.messages);
  const generationConfig: Record<string, unknown> = { maxOutputTokens: req.maxTokens };
  if (req.temperature !== undefined) generationConfig.temperature = req.temperature;
  if (req.topP !== undefined) generationConfig.topP = req.topP;
  if (req.stop?.length) generationConfig.stopSequences = req.stop;
  return {
    ...(system !== undefined ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    contents: turns.map((t) => ({ role: t.role === "assistant" ? "model" : "user", parts: [{ text: t.content }] })),
    generationConfig,
  };
}

export function providerAPath(upstreamModel: string, stream: boolean): string {
  const model = encodeURIComponent(upstreamModel);
  return stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
}

export interface ParsedAChunk {
  text: string;
  finishReason: FinishReason | undefined;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

/** One GenerateContentResponse (a whole answer, or one SSE chunk of a stream). */
export function parseProviderAChunk(body: any): ParsedAChunk {
  const candidate = body?.candidates?.[0];
  const text = (candidate?.content?.parts ?? [])
    .filter((p: any) => typeof p?.text === "string" && !p.thought)
    .map((p: any) => p.text as string)
    .join("");
  let finishReason = geminiFinishReason(candidate?.finishReason);
  if (!candidate && body?.promptFeedback?.blockReason) finishReason = "content_filter";
  const u = body?.usageMetadata;
  const prompt = typeof u?.promptTokenCount === "number" ? u.promptTokenCount : undefined;
  let completion = typeof u?.candidatesTokenCount === "number" ? u.candidatesTokenCount : undefined;
  // Thinking models count thoughts separately; the total is what is billed.
  if (completion === undefined && typeof u?.totalTokenCount === "number" && prompt !== undefined) completion = u.totalTokenCount - prompt;
  if (completion !== undefined && typeof u?.thoughtsTokenCount === "number") completion += u.thoughtsTokenCount;
  return { text, finishReason, promptTokens: prompt, completionTokens: completion };
}

export function parseProviderAResponse(text: string): ParsedAChunk {
  const body = parseJson(text, "provider_a");
  if (body?.error) throw new AppError("upstream_error", "The provider_a upstream returned an error");
  return parseProviderAChunk(body);
}
