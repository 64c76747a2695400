import { openAiFinishReason } from "./mapping.js";
import type { ChatMessage, FinishReason, ModelRequest, ToolCall, ToolCallDelta } from "./types.js";

/** A local OpenAI-compatible server (vLLM, llama.cpp, Ollama): the request passes through almost as is. */
export function toOpenAiMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  const content = m.parts
    ? m.parts.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: p.url } }))
    : m.toolCalls?.length && m.content === ""
      ? null
      : m.content;
  return {
    role: m.role,
    content,
    ...(m.toolCalls?.length ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) } : {}),
  };
}

export function openAiCompatibleRequest(req: ModelRequest, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const rf = req.responseFormat;
  const c = req.toolChoice;
  return {
    model: upstreamModel,
    messages: req.messages.map(toOpenAiMessage),
    max_tokens: req.maxTokens,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.stop?.length ? { stop: req.stop } : {}),
    ...(req.presencePenalty !== undefined ? { presence_penalty: req.presencePenalty } : {}),
    ...(req.frequencyPenalty !== undefined ? { frequency_penalty: req.frequencyPenalty } : {}),
    ...(req.seed !== undefined ? { seed: req.seed } : {}),
    ...(req.tools?.length
      ? {
          tools: req.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters, strict: t.strict } })),
          ...(c ? { tool_choice: typeof c === "object" ? { type: "function", function: { name: c.name } } : c } : {}),
          ...(req.parallelToolCalls !== undefined ? { parallel_tool_calls: req.parallelToolCalls } : {}),
        }
      : {}),
    ...(rf && rf.type !== "text"
      ? { response_format: rf.type === "json_schema" ? { type: "json_schema", json_schema: { name: rf.name, schema: rf.schema, strict: rf.strict } } : rf }
      : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

export function parseOpenAiChunk(body: any): {
  text: string;
  toolCalls?: ToolCall[];
  toolDeltas?: ToolCallDelta[];
  finishReason?: FinishReason;
  promptTokens?: number;
  completionTokens?: number;
} {
  const choice = body?.choices?.[0];
  const text = choice?.delta?.content ?? choice?.message?.content ?? "";
  const calls: any[] | undefined = choice?.message?.tool_calls;
  const deltas: any[] | undefined = choice?.delta?.tool_calls;
  return {
    text: typeof text === "string" ? text : "",
    ...(Array.isArray(calls) ? { toolCalls: calls.map((c) => ({ id: String(c.id), name: String(c.function?.name), arguments: String(c.function?.arguments ?? "") })) } : {}),
    ...(Array.isArray(deltas)
      ? {
          toolDeltas: deltas.map((d) => ({
            index: Number(d.index ?? 0),
            ...(d.id ? { id: String(d.id) } : {}),
            ...(d.function?.name ? { name: String(d.function.name) } : {}),
            arguments: String(d.function?.arguments ?? ""),
          })),
        }
      : {}),
    finishReason: openAiFinishReason(choice?.finish_reason),
    promptTokens: body?.usage?.prompt_tokens,
    completionTokens: body?.usage?.completion_tokens,
  };
}
