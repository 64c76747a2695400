import type { ChatMessage, ModelOptions, ToolCall } from "../providers/types.js";
import { bad, bool, checkStorable, given, isObject, number, optionalString, parseContent, parseResponseFormat, parseToolChoice, parseTools, positiveInt, refuse } from "./fields.js";

/** A validated OpenAI chat-completions request plus thread_id: every field is honoured or refused. */
export interface ChatRequest extends ModelOptions {
  model: string | undefined;
  messages: ChatMessage[];
  threadId: string | undefined;
  maxTokens: number | undefined;
  stream: boolean;
  includeUsage: boolean;
}

/**
 * The fields of the OpenAI chat-completions reference that the gateway refuses unless absent or
 * neutral, with the reason given to the client. Everything else in the reference is honoured
 * below; a field in neither list is unknown and refused too.
 */
const REFUSED: [string, (v: unknown) => boolean, string][] = [
  ["n", (v) => v === 1, "only n = 1 is supported"],
  ["logprobs", (v) => v === false, "log probabilities are not available from the providers behind this gateway"],
  ["top_logprobs", (v) => v === 0, "log probabilities are not available from the providers behind this gateway"],
  ["logit_bias", (v) => isObject(v) && Object.keys(v).length === 0, "token biases are not available from the providers behind this gateway"],
  ["modalities", (v) => Array.isArray(v) && v.length === 1 && v[0] === "text", 'only text output (["text"]) is supported'],
  ["audio", () => false, "audio output is not supported"],
  ["prediction", () => false, "predicted outputs are not supported"],
  ["functions", () => false, "use tools instead of the deprecated functions"],
  ["function_call", () => false, "use tool_choice instead of the deprecated function_call"],
  ["web_search_options", () => false, "built-in web search is not supported"],
  ["reasoning_effort", () => false, "reasoning effort is not configurable for these models"],
  ["verbosity", (v) => v === "medium", "verbosity is not configurable for these models"],
  ["service_tier", (v) => v === "auto" || v === "default", "only the default service tier exists"],
  ["store", (v) => v === true, "every turn is stored in its thread (store: false cannot be honoured)"],
  ["metadata", (v) => isObject(v) && Object.keys(v).length === 0, "request metadata is not stored"],
  ["prompt_cache_key", () => false, "prompt caching is not configurable"],
  ["prompt_cache_retention", () => false, "prompt caching is not configurable"],
];
const HONOURED = new Set([
  "model", "messages", "thread_id", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "stream", "stream_options",
  "user", "safety_identifier", "tools", "tool_choice", "parallel_tool_calls", "response_format", "presence_penalty", "frequency_penalty", "seed",
]);
const KNOWN = new Set([...HONOURED, ...REFUSED.map(([name]) => name)]);

function toolCalls(v: unknown, param: string): ToolCall[] | undefined {
  if (!given(v)) return undefined;
  if (!Array.isArray(v)) throw bad(param, `${param} must be an array`);
  return v.map((c, k) => {
    const p = `${param}[${k}]`;
    if (!isObject(c) || (given(c.type) && c.type !== "function") || !isObject(c.function)) throw bad(p, `${p} must be {"id","type":"function","function":{"name","arguments"}}`);
    if (typeof c.id !== "string" || c.id.length === 0 || c.id.length > 255) throw bad(`${p}.id`, `${p}.id must be a non-empty string`);
    if (typeof c.function.name !== "string" || c.function.name.length === 0) throw bad(`${p}.function.name`, `${p}.function.name must be a string`);
    if (typeof c.function.arguments !== "string") throw bad(`${p}.function.arguments`, `${p}.function.arguments must be a JSON string`);
    return { id: c.id, name: c.function.name, arguments: c.function.arguments };
  });
}

function parseMessage(m: unknown, i: number, prev: ChatMessage | undefined, continuing: boolean): ChatMessage {
  const param = `messages[${i}]`;
  if (!isObject(m)) throw bad(param, `${param} must be an object with role and content`);
  const role = m.role === "developer" ? "system" : m.role;
  const text = { textTypes: ["text"], imageUrl: () => undefined };
  switch (role) {
    case "system":
      return { role, content: parseContent(m.content, `${param}.content`, text).text };
    case "user": {
      const c = parseContent(m.content, `${param}.content`, { textTypes: ["text"], imageType: "image_url", imageUrl: (p) => (isObject(p.image_url) ? p.image_url.url : undefined) });
      return { role, content: c.text, ...(c.parts ? { parts: c.parts } : {}) };
    }
    case "assistant": {
      const calls = toolCalls(m.tool_calls, `${param}.tool_calls`);
      const content = given(m.content) ? parseContent(m.content, `${param}.content`, { textTypes: ["text", "refusal"], imageUrl: () => undefined }).text : "";
      return { role, content, ...(calls?.length ? { toolCalls: calls } : {}) };
    }
    case "tool": {
      // A tool message answers a call of the assistant message before it (or, continuing a thread, the stored one).
      const answers = prev?.toolCalls?.length || prev?.role === "tool" || (prev === undefined && continuing);
      if (!answers) throw bad(`${param}.role`, `${param}: a tool message must follow an assistant message with tool_calls (or continue a thread with thread_id)`);
      if (typeof m.tool_call_id !== "string" || m.tool_call_id.length === 0) throw bad(`${param}.tool_call_id`, `${param}.tool_call_id is required`);
      return { role, toolCallId: m.tool_call_id, content: parseContent(m.content, `${param}.content`, text).text };
    }
    default:
      throw bad(`${param}.role`, `${param}.role must be one of system, developer, user, assistant, tool`);
  }
}

/**
 * Tool messages answer calls of the assistant message they follow. `from`: the index of the
 * first request message (after a thread's history); `param(i)` names the call id of request message i.
 * `skipLeading`: leading tool messages are left to the check against the thread's history.
 */
export function checkToolResults(messages: ChatMessage[], from: number, param: (i: number) => string, skipLeading = false): void {
  let open: Set<string> | undefined;
  let leading = skipLeading;
  messages.forEach((m, i) => {
    if (m.role === "assistant") open = new Set((m.toolCalls ?? []).map((c) => c.id));
    else if (m.role === "tool") {
      if (leading && !open) return;
      if (!open?.has(m.toolCallId!)) {
        throw bad(param(i - from), `${param(i - from)} ${JSON.stringify(m.toolCallId)} answers no tool call of the preceding assistant message`);
      }
    } else if (m.role !== "system") open = undefined;
    if (m.role !== "tool") leading = false;
  });
}

/**
 * The call ids a continuation's leading tool results answer: its tool messages before its first
 * message that is neither system nor tool. Only these are checked against the thread's history
 * (`checkToolResults`); the open statement checks them too, so it holds no money for a request
 * that will get 400 (chat/store.ts `openContinuation`).
 */
export function leadingToolResultIds(messages: ChatMessage[]): string[] {
  const ids: string[] = [];
  for (const m of messages) {
    if (m.role === "tool") ids.push(m.toolCallId ?? "");
    else if (m.role !== "system") break;
  }
  return ids;
}

export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw bad("body", "The request body must be a JSON object (Content-Type: application/json)");
  checkStorable(body);
  const model = body.model;
  if (given(model) && (typeof model !== "string" || model.length === 0)) throw bad("model", "model must be a string");
  const rawMessages = body.messages;
  if (!Array.isArray(rawMessages)) throw bad("messages", "messages is required and must be an array");
  if (rawMessages.length === 0) throw bad("messages", "messages must contain at least one message");
  const threadId = body.thread_id;
  if (given(threadId) && (typeof threadId !== "string" || threadId.length === 0 || threadId.length > 255)) {
    throw bad("thread_id", "thread_id must be a thread id string from an earlier response");
  }
  const messages: ChatMessage[] = [];
  rawMessages.forEach((m, i) => messages.push(parseMessage(m, i, messages[i - 1], given(threadId))));
  let stop: string[] | undefined;
  if (typeof body.stop === "string") stop = [body.stop];
  else if (Array.isArray(body.stop)) {
    if (body.stop.length > 4 || !body.stop.every((s) => typeof s === "string" && s.length > 0)) throw bad("stop", "stop must be a string or up to 4 non-empty strings");
    stop = body.stop as string[];
  } else if (given(body.stop)) throw bad("stop", "stop must be a string or an array of strings");
  const stream = bool(body, "stream") === true;
  const so = body.stream_options;
  if (given(so)) {
    if (!isObject(so)) throw bad("stream_options", "stream_options must be an object");
    if (!stream) throw bad("stream_options", "stream_options is only allowed when stream is true");
    if (given(so.include_usage) && typeof so.include_usage !== "boolean") throw bad("stream_options.include_usage", "stream_options.include_usage must be a boolean");
    for (const k of Object.keys(so)) if (k !== "include_usage" && given(so[k])) throw bad(`stream_options.${k}`, `stream_options.${k} is not supported`);
  }
  for (const [name, neutral, why] of REFUSED) refuse(body, name, neutral, why);
  for (const k of Object.keys(body)) if (!KNOWN.has(k) && given(body[k])) throw bad(k, `Unrecognized request argument supplied: ${k}`);
  optionalString(body, "user");
  optionalString(body, "safety_identifier");
  const tools = parseTools(body.tools, "tools", true);
  const seed = body.seed;
  if (given(seed) && (typeof seed !== "number" || !Number.isInteger(seed))) throw bad("seed", "seed must be an integer");
  checkToolResults(messages, 0, (i) => `messages[${i}].tool_call_id`, given(threadId));
  return {
    model: (model as string | null | undefined) ?? undefined,
    messages,
    threadId: (threadId as string | null | undefined) ?? undefined,
    maxTokens: positiveInt(body, "max_completion_tokens") ?? positiveInt(body, "max_tokens"),
    temperature: number(body, "temperature", 0, 2),
    topP: number(body, "top_p", 0, 1),
    presencePenalty: number(body, "presence_penalty", -2, 2),
    frequencyPenalty: number(body, "frequency_penalty", -2, 2),
    seed: seed as number | undefined,
    stop,
    stream,
    includeUsage: stream && isObject(so) && so.include_usage === true,
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools, true),
    parallelToolCalls: bool(body, "parallel_tool_calls"),
    responseFormat: parseResponseFormat(body.response_format, "response_format", true),
  };
}
