import type { ChatMessage, FinishReason } from "./types.js";

/**
 * Pure wire-format mapping shared by the providers: system extraction, merging of consecutive
 * same-role turns (both upstream APIs reject or mishandle alternation breaks), finish reasons.
 */

export interface SplitConversation {
  system: string | undefined;
  turns: { role: "user" | "assistant"; content: string }[];
}

export function splitSystem(messages: ChatMessage[]): SplitConversation {
  const system: string[] = [];
  const turns: SplitConversation["turns"] = [];
  for (const m of messages) {
    if (m.role === "system") {
      if (m.content.length > 0) system.push(m.content);
      continue;
    }
    const last = turns[turns.length - 1];
    if (last && last.role === m.role) last.content = `${last.content}\n\n${m.content}`;
    else turns.push({ role: m.role, content: m.content });
  }
  return { system: system.length ? system.join("\n\n") : undefined, turns };
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
  return "stop"; // end_turn, stop_sequence, pause_turn, tool_use
}

export function openAiFinishReason(reason: string | undefined | null): FinishReason | undefined {
  if (!reason) return undefined;
  if (reason === "length") return "length";
  if (reason === "content_filter") return "content_filter";
  return "stop";
}

/** A rough token count for text whose usage the upstream never reported (simulator, cut streams). */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}
