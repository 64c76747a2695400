import { AppError } from "../errors/app-error.js";
import { randomBase62 } from "../infra/ids.js";
import { argumentsObject, conversation, geminiFinishReason, parseDataUrl, pushText, toolNameFor } from "./mapping.js";
import type { ChatMessage, FinishReason, ModelRequest, ToolCall } from "./types.js";
import { parseJson } from "./upstream-http.js";

/**
 * Gemini-style generateContent (https://ai.google.dev/api/generate-content): system →
 * systemInstruction, assistant → model, tool calls → functionCall parts, tool results →
 * functionResponse parts in a user turn, images → inlineData, tools → functionDeclarations with
 * toolConfig, structured output → responseMimeType + responseJsonSchema.
 */
type Part = Record<string, unknown>;
const textOf = (p: Part) => (typeof p.text === "string" && Object.keys(p).length === 1 ? p.text : undefined);
const textPart = (text: string): Part => ({ text });

/** FunctionResponse.response: "Use "output" key to specify function output"; a JSON object result goes as is. */
function toolResponse(content: string): Record<string, unknown> {
  try {
    const v = JSON.parse(content);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v;
  } catch {
    /* plain text */
  }
  return { output: content };
}

/**
 * Gemini 3 models reject a function call in the history without the thoughtSignature they sent
 * with it (only the first call of a step carries one). The thread keeps it; for a call whose
 * signature is unknown (history sent back by a stateless client) Google documents this sentinel
 * (https://ai.google.dev/gemini-api/docs/thought-signatures).
 */
export const UNKNOWN_SIGNATURE = "skip_thought_signature_validator";
const needsSignatures = (model: string) => model.startsWith("provider_a/model-3");

function partsOf(messages: ChatMessage[], all: ChatMessage[], offset: number, signatures: boolean): Part[] {
  const parts: Part[] = [];
  messages.forEach((m, k) => {
    if (m.role === "tool") {
      parts.push({ functionResponse: { name: toolNameFor(all, offset + k), response: toolResponse(m.content) } });
      return;
    }
    if (m.parts) {
      for (const p of m.parts) {
        if (p.type === "text") pushText(parts, p.text, textPart, textOf);
        else {
          const data = parseDataUrl(p.url);
          if (!data) throw new AppError("invalid_request_error", "provider_a models take images as data URLs only (data:image/…;base64,…)", { param: "image_url" });
          parts.push({ inlineData: { mimeType: data.mimeType, data: data.data } });
        }
      }
    } else pushText(parts, m.content, textPart, textOf);
    m.toolCalls?.forEach((c, i) => {
      const signature = c.signature ?? (signatures && i === 0 ? UNKNOWN_SIGNATURE : undefined);
      parts.push({ functionCall: { name: c.name, args: argumentsObject(c.arguments) }, ...(signature ? { thoughtSignature: signature } : {}) });
    });
  });
  // Gemini rejects a turn without parts (e.g. an assistant turn that was only an empty answer).
  if (parts.length === 0) parts.push({ text: "" });
  return parts;
}

export function providerARequest(req: ModelRequest): Record<string, unknown> {
  const { system, turns } = conversation(req.messages);
  const nonSystem = req.messages.filter((m) => m.role !== "system");
  const generationConfig: Record<string, unknown> = { maxOutputTokens: req.maxTokens };
  if (req.temperature !== undefined) generationConfig.temperature = req.temperature;
  if (req.topP !== undefined) generationConfig.topP = req.topP;
  if (req.stop?.length) generationConfig.stopSequences = req.stop;
  if (req.presencePenalty !== undefined) generationConfig.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) generationConfig.frequencyPenalty = req.frequencyPenalty;
  if (req.seed !== undefined) generationConfig.seed = req.seed;
  const rf = req.responseFormat;
  if (rf?.type === "json_object") generationConfig.responseMimeType = "application/json";
  if (rf?.type === "json_schema") {
    generationConfig.responseMimeType = "application/json";
    generationConfig.responseJsonSchema = rf.schema;
  }
  let offset = 0;
  const contents = turns.map((t) => {
    const parts = partsOf(t.messages, nonSystem, offset, needsSignatures(req.model));
    offset += t.messages.length;
    return { role: t.role === "assistant" ? "model" : "user", parts };
  });
  const body: Record<string, unknown> = {
    ...(system !== undefined ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    contents,
    generationConfig,
  };
  if (req.tools?.length) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          // parametersJsonSchema takes full JSON Schema (additionalProperties, $defs…), as OpenAI clients send it.
          ...(t.parameters ? { parametersJsonSchema: t.parameters } : {}),
        })),
      },
    ];
    const c = req.toolChoice ?? "auto";
    body.toolConfig = {
      functionCallingConfig:
        typeof c === "object" ? { mode: "ANY", allowedFunctionNames: [c.name] } : { mode: c === "required" ? "ANY" : c === "none" ? "NONE" : "AUTO" },
    };
  }
  return body;
}

export function providerAPath(upstreamModel: string, stream: boolean): string {
  const model = encodeURIComponent(upstreamModel);
  return stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
}

export interface ParsedAChunk {
  text: string;
  /** Whole function calls: Gemini sends each call complete in one chunk. */
  toolCalls?: ToolCall[];
  finishReason: FinishReason | undefined;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

/** One GenerateContentResponse (a whole answer, or one SSE chunk of a stream). */
export function parseProviderAChunk(body: any): ParsedAChunk {
  const candidate = body?.candidates?.[0];
  const parts: any[] = candidate?.content?.parts ?? [];
  const text = parts
    .filter((p: any) => typeof p?.text === "string" && !p.thought)
    .map((p: any) => p.text as string)
    .join("");
  const calls: ToolCall[] = parts
    .filter((p: any) => p?.functionCall && typeof p.functionCall.name === "string")
    .map((p: any) => ({
      id: typeof p.functionCall.id === "string" && p.functionCall.id ? p.functionCall.id : `call_${randomBase62(24)}`,
      name: p.functionCall.name,
      arguments: JSON.stringify(p.functionCall.args ?? {}),
      ...(typeof p.thoughtSignature === "string" ? { signature: p.thoughtSignature } : {}),
    }));
  let finishReason = geminiFinishReason(candidate?.finishReason);
  // Gemini ends a function-calling answer with STOP; OpenAI clients run their tools on "tool_calls".
  if (finishReason === "stop" && calls.length) finishReason = "tool_calls";
  if (!candidate && body?.promptFeedback?.blockReason) finishReason = "content_filter";
  const u = body?.usageMetadata;
  const prompt = typeof u?.promptTokenCount === "number" ? u.promptTokenCount : undefined;
  let completion = typeof u?.candidatesTokenCount === "number" ? u.candidatesTokenCount : undefined;
  // Thinking models count thoughts separately; the total is what is billed.
  if (completion === undefined && typeof u?.totalTokenCount === "number" && prompt !== undefined) completion = u.totalTokenCount - prompt;
  if (completion !== undefined && typeof u?.thoughtsTokenCount === "number") completion += u.thoughtsTokenCount;
  return { text, ...(calls.length ? { toolCalls: calls } : {}), finishReason, promptTokens: prompt, completionTokens: completion };
}

export function parseProviderAResponse(text: string): ParsedAChunk {
  const body = parseJson(text, "provider_a");
  if (body?.error) throw new AppError("upstream_error", "The provider_a upstream returned an error");
  return parseProviderAChunk(body);
}
