import type { ChatMessage, ModelOptions, ResponseFormat, ToolCall } from "../providers/types.js";
import { bad, bool, checkStorable, given, isObject, number, optionalString, parseContent, parseResponseFormat, parseToolChoice, parseTools, positiveInt, refuse } from "./fields.js";
import { checkToolResults } from "./request.js";

/** A validated Responses API request (POST /api/v1/responses): every field is honoured or refused. */
export interface ResponsesRequest extends ModelOptions {
  model: string | undefined;
  messages: ChatMessage[];
  /** Where each message came from in `input` (for `param` in errors found later). */
  inputIndex: number[];
  instructions: string | undefined;
  previousResponseId: string | undefined;
  threadId: string | undefined;
  maxTokens: number | undefined;
  stream: boolean;
  store: boolean;
  metadata: Record<string, string> | null;
  /** The request's own tools and text.format, echoed in the response object. */
  echo: { tools: unknown[]; toolChoice: unknown; text: { format: Record<string, unknown> } };
}

const REFUSED: [string, (v: unknown) => boolean, string][] = [
  ["include", (v) => Array.isArray(v) && v.length === 0, "no includable extras (reasoning, logprobs, search results) exist here"],
  ["truncation", (v) => v === "disabled", 'only truncation "disabled" is supported'],
  ["reasoning", (v) => isObject(v) && Object.values(v).every((x) => !given(x)), "reasoning settings are not configurable for these models"],
  ["background", (v) => v === false, "background responses are not supported"],
  ["conversation", () => false, "use previous_response_id or thread_id to continue a conversation"],
  ["prompt", () => false, "stored prompt templates are not supported"],
  ["max_tool_calls", () => false, "max_tool_calls is not supported"],
  ["top_logprobs", (v) => v === 0, "log probabilities are not available from the providers behind this gateway"],
  ["service_tier", (v) => v === "auto" || v === "default", "only the default service tier exists"],
  ["prompt_cache_key", () => false, "prompt caching is not configurable"],
  ["prompt_cache_retention", () => false, "prompt caching is not configurable"],
  ["context_management", () => false, "context management is not supported"],
  ["stream_options", (v) => isObject(v) && Object.keys(v).every((k) => k === "include_obfuscation"), "only stream_options.include_obfuscation is accepted"],
];
const HONOURED = new Set([
  "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "previous_response_id", "thread_id", "stream", "store",
  "max_output_tokens", "temperature", "top_p", "text", "metadata", "user", "safety_identifier",
]);
const KNOWN = new Set([...HONOURED, ...REFUSED.map(([n]) => n)]);

const imageUrl = (p: Record<string, unknown>) => p.image_url;

function inputMessages(input: unknown): { messages: ChatMessage[]; inputIndex: number[] } {
  if (typeof input === "string") return { messages: [{ role: "user", content: input }], inputIndex: [0] };
  if (!Array.isArray(input) || input.length === 0) throw bad("input", "input must be a string or a non-empty array of input items");
  const messages: ChatMessage[] = [];
  const inputIndex: number[] = [];
  const push = (m: ChatMessage, i: number) => {
    messages.push(m);
    inputIndex.push(i);
  };
  input.forEach((item, i) => {
    const p = `input[${i}]`;
    if (!isObject(item)) throw bad(p, `${p} must be an input item object`);
    const type = item.type ?? "message";
    if (type === "message") {
      const role = item.role === "developer" ? "system" : item.role;
      if (role === "user") {
        const c = parseContent(item.content, `${p}.content`, { textTypes: ["input_text"], imageType: "input_image", imageUrl });
        return push({ role, content: c.text, ...(c.parts ? { parts: c.parts } : {}) }, i);
      }
      if (role === "system") return push({ role, content: parseContent(item.content, `${p}.content`, { textTypes: ["input_text"], imageUrl }).text }, i);
      if (role === "assistant") {
        const text = parseContent(item.content, `${p}.content`, { textTypes: ["output_text", "input_text", "refusal"], imageUrl }).text;
        return push({ role, content: text }, i);
      }
      throw bad(`${p}.role`, `${p}.role must be user, system, developer or assistant`);
    }
    if (type === "function_call") {
      if (typeof item.call_id !== "string" || !item.call_id) throw bad(`${p}.call_id`, `${p}.call_id must be a non-empty string`);
      if (typeof item.name !== "string" || !item.name) throw bad(`${p}.name`, `${p}.name must be a string`);
      if (typeof item.arguments !== "string") throw bad(`${p}.arguments`, `${p}.arguments must be a JSON string`);
      const call: ToolCall = { id: item.call_id, name: item.name, arguments: item.arguments };
      // Calls of one answer (and the text before them) are one assistant message upstream.
      const last = messages[messages.length - 1];
      if (last?.role === "assistant") {
        last.toolCalls = [...(last.toolCalls ?? []), call];
        return;
      }
      return push({ role: "assistant", content: "", toolCalls: [call] }, i);
    }
    if (type === "function_call_output") {
      if (typeof item.call_id !== "string" || !item.call_id) throw bad(`${p}.call_id`, `${p}.call_id must be a non-empty string`);
      const output = parseContent(item.output, `${p}.output`, { textTypes: ["input_text"], imageUrl }).text;
      return push({ role: "tool", toolCallId: item.call_id, content: output }, i);
    }
    throw bad(`${p}.type`, `${p}.type ${JSON.stringify(type)} is not supported (message, function_call, function_call_output)`);
  });
  return { messages, inputIndex };
}

function parseMetadata(v: unknown): Record<string, string> | null {
  if (!given(v)) return null;
  if (!isObject(v) || Object.keys(v).length > 16) throw bad("metadata", "metadata must be an object of at most 16 string values");
  for (const [k, x] of Object.entries(v)) {
    if (k.length > 64 || typeof x !== "string" || x.length > 512) throw bad(`metadata.${k}`, "metadata keys are at most 64 characters, values strings of at most 512");
  }
  return v as Record<string, string>;
}

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw bad("body", "The request body must be a JSON object (Content-Type: application/json)");
  checkStorable(body);
  for (const [name, neutral, why] of REFUSED) refuse(body, name, neutral, why);
  for (const k of Object.keys(body)) if (!KNOWN.has(k) && given(body[k])) throw bad(k, `Unrecognized request argument supplied: ${k}`);
  const model = body.model;
  if (given(model) && (typeof model !== "string" || model.length === 0)) throw bad("model", "model must be a string");
  if (!given(body.input)) throw bad("input", "input is required");
  const { messages, inputIndex } = inputMessages(body.input);
  const previousResponseId = optionalString(body, "previous_response_id", 255);
  const threadId = optionalString(body, "thread_id", 255);
  const instructions = optionalString(body, "instructions", 1_000_000);
  optionalString(body, "user");
  optionalString(body, "safety_identifier");
  const continuing = given(previousResponseId) || given(threadId);
  const param = (i: number) => `input[${inputIndex[i] ?? i}].call_id`;
  checkToolResults(messages, 0, param, continuing);
  const tools = parseTools(body.tools, "tools", false);
  let text: Record<string, unknown> = { type: "text" };
  let responseFormat: ResponseFormat | undefined;
  if (given(body.text)) {
    if (!isObject(body.text)) throw bad("text", "text must be an object");
    refuse(body.text, "verbosity", (v) => v === "medium", "verbosity is not configurable for these models");
    responseFormat = parseResponseFormat(body.text.format, "text.format", false);
    if (responseFormat) text = body.text.format as Record<string, unknown>;
  }
  const stream = bool(body, "stream") === true;
  return {
    model: (model as string | undefined) ?? undefined,
    messages,
    inputIndex,
    instructions,
    previousResponseId,
    threadId,
    maxTokens: positiveInt(body, "max_output_tokens"),
    temperature: number(body, "temperature", 0, 2),
    topP: number(body, "top_p", 0, 1),
    stream,
    store: bool(body, "store") ?? true,
    metadata: parseMetadata(body.metadata),
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools, false),
    parallelToolCalls: bool(body, "parallel_tool_calls"),
    responseFormat,
    echo: { tools: Array.isArray(body.tools) ? body.tools : [], toolChoice: body.tool_choice ?? "auto", text: { format: text } },
  };
}
