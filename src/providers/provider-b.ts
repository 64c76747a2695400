import { AppError } from "../errors/app-error.js";
import { anthropicFinishReason, argumentsObject, conversation, parseDataUrl, pushText } from "./mapping.js";
import type { ChatMessage, FinishReason, ModelRequest, ToolCall, ToolCallDelta } from "./types.js";

/**
 * Anthropic-style Messages API (https://docs.anthropic.com/en/api/messages): top-level system,
 * merged turns, max_tokens always present; tool calls → tool_use blocks, tool results →
 * tool_result blocks in a user turn, images → image blocks, tools → input_schema + tool_choice,
 * json_schema → output_config.format.
 */
type Block = Record<string, unknown>;
const textOf = (b: Block) => (b.type === "text" ? (b.text as string) : undefined);
const textBlock = (text: string): Block => ({ type: "text", text });

/** A JSON-object instruction: provider_b has no schema-less JSON mode, so it is asked for in the system prompt. */
export const JSON_OBJECT_INSTRUCTION = "Respond with a single valid JSON object and nothing else.";

function blocksOf(messages: ChatMessage[]): Block[] {
  const blocks: Block[] = [];
  for (const m of messages) {
    if (m.role === "tool") {
      blocks.push({ type: "tool_result", tool_use_id: m.toolCallId, content: m.content });
      continue;
    }
    if (m.parts) {
      for (const p of m.parts) {
        if (p.type === "text") pushText(blocks, p.text, textBlock, textOf);
        else {
          const data = parseDataUrl(p.url);
          blocks.push({ type: "image", source: data ? { type: "base64", media_type: data.mimeType, data: data.data } : { type: "url", url: p.url } });
        }
      }
    } else pushText(blocks, m.content, textBlock, textOf);
    for (const c of m.toolCalls ?? []) blocks.push({ type: "tool_use", id: c.id, name: c.name, input: argumentsObject(c.arguments) });
  }
  return blocks;
}

export function providerBRequest(req: ModelRequest, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const { system, turns } = conversation(req.messages, req.responseFormat?.type === "json_object" ? JSON_OBJECT_INSTRUCTION : undefined);
  const messages = turns.map((t) => {
    const blocks = blocksOf(t.messages);
    // Plain text stays a string, as before tools existed (and as most examples show it).
    const content = blocks.length === 1 && blocks[0]!.type === "text" ? (blocks[0]!.text as string) : blocks.length === 0 ? "" : blocks;
    return { role: t.role, content };
  });
  const body: Record<string, unknown> = {
    model: upstreamModel,
    max_tokens: req.maxTokens,
    ...(system !== undefined ? { system } : {}),
    messages,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.stop?.length ? { stop_sequences: req.stop } : {}),
    ...(stream ? { stream: true } : {}),
  };
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      input_schema: t.parameters ?? { type: "object", properties: {} },
      ...(t.strict ? { strict: true } : {}),
    }));
    const c = req.toolChoice ?? "auto";
    const choice: Record<string, unknown> =
      typeof c === "object" ? { type: "tool", name: c.name } : { type: c === "required" ? "any" : c === "none" ? "none" : "auto" };
    if (req.parallelToolCalls === false && choice.type !== "none") choice.disable_parallel_tool_use = true;
    body.tool_choice = choice;
  } else {
    // provider_b refuses tool_use/tool_result blocks in a request that defines no tools, while
    // OpenAI takes a continuation without them (a thread, or previous_response_id, answered by
    // tool results alone): define the tools the history calls, with tool_choice none, so the
    // model reads its calls and their results but, as with OpenAI, calls nothing it was not offered.
    const called = [...new Set(req.messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.name)))];
    if (called.length) {
      body.tools = called.map((name) => ({ name, input_schema: { type: "object" } }));
      body.tool_choice = { type: "none" };
    }
  }
  if (req.responseFormat?.type === "json_schema") body.output_config = { format: { type: "json_schema", schema: req.responseFormat.schema } };
  return body;
}

export function parseProviderBResponse(body: any): {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  promptTokens?: number;
  completionTokens?: number;
} {
  const blocks: any[] = body?.content ?? [];
  const text = blocks
    .filter((b: any) => b?.type === "text" && typeof b.text === "string")
    .map((b: any) => b.text as string)
    .join("");
  const toolCalls = blocks
    .filter((b: any) => b?.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string")
    .map((b: any) => ({ id: b.id as string, name: b.name as string, arguments: JSON.stringify(b.input ?? {}) }));
  return {
    text,
    toolCalls,
    finishReason: anthropicFinishReason(body?.stop_reason) ?? "stop",
    promptTokens: sumInput(body?.usage),
    completionTokens: typeof body?.usage?.output_tokens === "number" ? body.usage.output_tokens : undefined,
  };
}

/** Cache reads and writes are input tokens too (billed as input here). */
function sumInput(u: any): number | undefined {
  if (typeof u?.input_tokens !== "number") return undefined;
  return u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

export interface ProviderBStreamState {
  finishReason?: FinishReason;
  promptTokens?: number;
  completionTokens?: number;
  done: boolean;
  /** Content-block index → OpenAI tool-call index, for the tool_use blocks seen so far. */
  toolBlocks?: Map<number, number>;
}

/**
 * Applies one SSE event; returns the text delta, if any, and passes tool-use pieces to `onTool`
 * (a tool_use content_block_start gives id and name, input_json_delta the argument fragments).
 * Throws on an `error` event, with the provider's message.
 */
export function applyProviderBEvent(state: ProviderBStreamState, event: string | undefined, data: any, onTool?: (d: ToolCallDelta) => void): string {
  const type = event ?? data?.type;
  switch (type) {
    case "message_start": {
      const input = sumInput(data?.message?.usage);
      if (input !== undefined) state.promptTokens = input;
      if (typeof data?.message?.usage?.output_tokens === "number") state.completionTokens = data.message.usage.output_tokens;
      return "";
    }
    case "content_block_start": {
      const block = data?.content_block;
      if (block?.type === "tool_use" && typeof data.index === "number") {
        state.toolBlocks ??= new Map();
        const index = state.toolBlocks.size;
        state.toolBlocks.set(data.index, index);
        onTool?.({ index, id: String(block.id), name: String(block.name), arguments: "" });
      }
      return "";
    }
    case "content_block_delta": {
      const d = data?.delta;
      if (d?.type === "input_json_delta") {
        const index = state.toolBlocks?.get(data.index);
        if (index !== undefined && typeof d.partial_json === "string" && d.partial_json) onTool?.({ index, arguments: d.partial_json });
        return "";
      }
      return d?.type === "text_delta" && typeof d.text === "string" ? d.text : "";
    }
    case "message_delta":
      if (data?.delta?.stop_reason) state.finishReason = anthropicFinishReason(data.delta.stop_reason);
      if (typeof data?.usage?.output_tokens === "number") state.completionTokens = data.usage.output_tokens;
      // Cumulative when present; some streams send 0 here, which must not erase message_start's count.
      if (typeof data?.usage?.input_tokens === "number") state.promptTokens = Math.max(state.promptTokens ?? 0, sumInput(data.usage)!);
      return "";
    case "message_stop":
      state.done = true;
      return "";
    case "error":
      throw new AppError("upstream_error", `The provider_b upstream reported an error mid-stream: ${String(data?.error?.message ?? data?.error?.type ?? "unknown")}`.slice(0, 500));
    default:
      return ""; // ping, content_block_stop
  }
}
