import { AppError } from "../errors/app-error.js";
import type { ChatMessage, FinishReason } from "./types.js";

/**
 * Pure wire-format mapping shared by the providers: system extraction, grouping of consecutive
 * same-role turns (both upstream APIs reject or mishandle alternation breaks; tool results travel
 * in user turns on both), finish reasons, data URLs.
 */

export interface Conversation {
  system: string | undefined;
  /** Alternating wire turns; a tool message belongs to a user turn. */
  turns: { role: "user" | "assistant"; messages: ChatMessage[] }[];
}

export function conversation(messages: ChatMessage[], extraSystem?: string): Conversation {
  const system: string[] = [];
  const turns: Conversation["turns"] = [];
  for (const m of messages) {
    if (m.role === "system") {
      if (m.content.length > 0) system.push(m.content);
      continue;
    }
    const role = m.role === "assistant" ? "assistant" : "user";
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.messages.push(m);
    else turns.push({ role, messages: [m] });
  }
  if (extraSystem) system.push(extraSystem);
  return { system: system.length ? system.join("\n\n") : undefined, turns };
}

export interface SplitConversation {
  system: string | undefined;
  turns: { role: "user" | "assistant"; content: string }[];
}

/** The text-only view of `conversation`: each turn's texts joined by a blank line. */
export function splitSystem(messages: ChatMessage[]): SplitConversation {
  const { system, turns } = conversation(messages);
  return { system, turns: turns.map((t) => ({ role: t.role, content: t.messages.map((m) => m.content).join("\n\n") })) };
}

/** Appends a part; adjacent text parts are joined by a blank line (as merged turns always were). */
export function pushText<P>(parts: P[], text: string, make: (text: string) => P, textOf: (p: P) => string | undefined): void {
  if (text.length === 0) return;
  const last = parts[parts.length - 1];
  const prev = last === undefined ? undefined : textOf(last);
  if (prev !== undefined) parts[parts.length - 1] = make(`${prev}\n\n${text}`);
  else parts.push(make(text));
}

/** The name of the function a tool message answers, from the assistant turns before it. */
export function toolNameFor(messages: ChatMessage[], index: number): string {
  const id = messages[index]!.toolCallId;
  for (let i = index - 1; i >= 0; i--) {
    const call = messages[i]!.toolCalls?.find((c) => c.id === id);
    if (call) return call.name;
  }
  throw new AppError("invalid_request_error", `No earlier assistant tool call has the id ${JSON.stringify(id)}`, { param: "tool_call_id" });
}

/** Parsed tool arguments; models occasionally produce broken JSON, which is passed on as a string. */
export function argumentsObject(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { arguments: text };
  }
}

export interface DataUrl {
  mimeType: string;
  data: string;
}

/** `data:<mime>;base64,<data>` → its parts; undefined for anything else. */
export function parseDataUrl(url: string): DataUrl | undefined {
  const m = /^data:([\w.+-]+\/[\w.+-]+);base64,/.exec(url);
  return m ? { mimeType: m[1]!.toLowerCase(), data: url.slice(m[0].length) } : undefined;
}

export function geminiFinishReason(reason: string | undefined | null): FinishReason | undefined {
  if (!reason || reason === "FINISH_REASON_UNSPECIFIED") return undefined;
  if (reason === "STOP") return "stop";
  if (reason === "MAX_TOKENS") return "length";
  if (["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"].includes(reason)) return "content_filter";
  return "stop";
}

export function anthropicFinishReason(reason: string | undefined | null): FinishReason | undefined {
  if (!reason) return undefined;
  if (reason === "max_tokens" || reason === "model_context_window_exceeded") return "length";
  if (reason === "refusal") return "content_filter";
  if (reason === "tool_use") return "tool_calls";
  return "stop"; // end_turn, stop_sequence, pause_turn
}

export function openAiFinishReason(reason: string | undefined | null): FinishReason | undefined {
  if (!reason) return undefined;
  if (reason === "length") return "length";
  if (reason === "content_filter") return "content_filter";
  if (reason === "tool_calls" || reason === "function_call") return "tool_calls";
  return "stop";
}

/** A rough token count for text whose usage the upstream never reported (simulator, cut streams). */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

/** The text a message sends upstream, for estimates and holds: its content and its tool calls (images: see below). */
export function messageText(m: ChatMessage): string {
  let s = m.content;
  for (const c of m.toolCalls ?? []) s += c.name + c.arguments;
  return s;
}

/**
 * Tokens an image may cost, for the worst-case hold: both providers scale images down and bill
 * a bounded count (provider_b about 1,600 tokens at most, provider_a 258 per tile / up to ~1,100);
 * settle() corrects it to the upstream's reported usage.
 */
export const IMAGE_HOLD_TOKENS = 2_000;

export function imageCount(messages: ChatMessage[]): number {
  let n = 0;
  for (const m of messages) for (const p of m.parts ?? []) if (p.type === "image") n++;
  return n;
}
