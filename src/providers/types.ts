/** The provider-neutral shapes the chat engine speaks; each provider module maps them to its wire format. */
export type Role = "system" | "user" | "assistant";

export interface ChatMessage {
  role: Role;
  content: string;
}

export type FinishReason = "stop" | "length" | "content_filter";

export interface ModelRequest {
  /** The gateway model id, e.g. provider_b/model-sonnet-4-6. */
  model: string;
  /** System messages first, then the conversation; providers move system text where they want it. */
  messages: ChatMessage[];
  maxTokens: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface ModelResult {
  content: string;
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * Filled in as an answer arrives, so a caller that aborts (client went away) still knows what was
 * produced and can save and bill it.
 */
export interface Progress {
  text: string;
  promptTokens?: number;
  completionTokens?: number;
  /** True once any text was handed to `onDelta`: from then on nothing may be retried. */
  emitted: boolean;
}

export interface CallOptions {
  stream: boolean;
  onDelta?: (text: string) => void;
  signal?: AbortSignal;
  progress?: Progress;
}
