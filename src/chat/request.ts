import { AppError } from "../errors/app-error.js";
import type { ChatMessage } from "../providers/types.js";

/** A validated OpenAI chat-completions request (the subset the gateway honours) plus thread_id. */
export interface ChatRequest {
  model: string | undefined;
  messages: ChatMessage[];
  threadId: string | undefined;
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[] | undefined;
  stream: boolean;
  includeUsage: boolean;
}

const bad = (param: string, message: string) => new AppError("invalid_request_error", message, { param });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function number(body: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) throw bad(name, `${name} must be a number from ${min} to ${max}`);
  return v;
}

function positiveInt(body: Record<string, unknown>, name: string): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1_000_000) throw bad(name, `${name} must be a whole number from 1 to 1000000`);
  return v;
}

function content(v: unknown, param: string, role: string): string {
  if (typeof v === "string") return v;
  if ((v === null || v === undefined) && role === "assistant") return "";
  if (Array.isArray(v)) {
    return v
      .map((part, j) => {
        if (!isObject(part) || part.type !== "text" || typeof part.text !== "string") {
          throw bad(`${param}[${j}]`, `${param}[${j}]: only text content parts ({"type":"text","text":…}) are supported`);
        }
        return part.text;
      })
      .join("");
  }
  throw bad(param, `${param} must be a string or an array of text parts`);
}

export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw bad("body", "The request body must be a JSON object (Content-Type: application/json)");
  const model = body.model;
  if (model !== undefined && model !== null && (typeof model !== "string" || model.length === 0)) throw bad("model", "model must be a string");
  const rawMessages = body.messages;
  if (!Array.isArray(rawMessages)) throw bad("messages", "messages is required and must be an array");
  if (rawMessages.length === 0) throw bad("messages", "messages must contain at least one message");
  const messages = rawMessages.map((m, i): ChatMessage => {
    const param = `messages[${i}]`;
    if (!isObject(m)) throw bad(param, `${param} must be an object with role and content`);
    const role = m.role === "developer" ? "system" : m.role;
    if (role !== "system" && role !== "user" && role !== "assistant") {
      throw bad(`${param}.role`, `${param}.role must be one of system, developer, user, assistant`);
    }
    return { role, content: content(m.content, `${param}.content`, role) };
  });
  const threadId = body.thread_id;
  if (threadId !== undefined && threadId !== null && (typeof threadId !== "string" || threadId.length === 0 || threadId.length > 255)) {
    throw bad("thread_id", "thread_id must be a thread id string from an earlier response");
  }
  let stop: string[] | undefined;
  if (typeof body.stop === "string") stop = [body.stop];
  else if (Array.isArray(body.stop)) {
    if (body.stop.length > 4 || !body.stop.every((s) => typeof s === "string" && s.length > 0)) throw bad("stop", "stop must be a string or up to 4 non-empty strings");
    stop = body.stop as string[];
  } else if (body.stop !== undefined && body.stop !== null) throw bad("stop", "stop must be a string or an array of strings");
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") throw bad("stream", "stream must be a boolean");
  const stream = body.stream === true;
  const so = body.stream_options;
  if (so !== undefined && so !== null) {
    if (!isObject(so)) throw bad("stream_options", "stream_options must be an object");
    if (!stream) throw bad("stream_options", "stream_options is only allowed when stream is true");
    if (so.include_usage !== undefined && typeof so.include_usage !== "boolean") throw bad("stream_options.include_usage", "stream_options.include_usage must be a boolean");
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw bad("n", "Only n = 1 is supported");
  if (body.user !== undefined && body.user !== null && typeof body.user !== "string") throw bad("user", "user must be a string");
  return {
    model: (model as string | null | undefined) ?? undefined,
    messages,
    threadId: (threadId as string | null | undefined) ?? undefined,
    maxTokens: positiveInt(body, "max_completion_tokens") ?? positiveInt(body, "max_tokens"),
    temperature: number(body, "temperature", 0, 2),
    topP: number(body, "top_p", 0, 1),
    stop,
    stream,
    includeUsage: stream && isObject(so) && so.include_usage === true,
  };
}
