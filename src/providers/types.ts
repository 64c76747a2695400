/** The provider-neutral shapes the chat engine speaks; each provider module maps them to its wire format. */
export type Role = "system" | "user" | "assistant" | "tool";

/** A user content part: text, or an image as a data URL or an http(s) URL. */
export type ContentPart = { type: "text"; text: string } | { type: "image"; url: string };

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as a JSON text, exactly as OpenAI clients expect them. */
  arguments: string;
  /** provider_a's thoughtSignature for this call: kept in the thread, sent back with the call. */
  signature?: string;
}

export interface ChatMessage {
  role: Role;
  /** The text (for a tool message: the tool's result). */
  content: string;
  /** Set when a user message has image parts: all its parts in order (text included). */
  parts?: ContentPart[];
  /** An assistant message's function calls. */
  toolCalls?: ToolCall[];
  /** A tool message: the id of the call it answers. */
  toolCallId?: string;
}

export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict: boolean };

export type FinishReason = "stop" | "length" | "content_filter" | "tool_calls";

/** The generation options a client may set; every one is mapped by each provider or refused before the call. */
export interface ModelOptions {
  temperature?: number;
  topP?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  /** false: at most one function call per answer. */
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
}

export interface ModelRequest extends ModelOptions {
  /** The gateway model id, e.g. provider_b/model-sonnet-4-6. */
  model: string;
  /** System messages first, then the conversation; providers move system text where they want it. */
  messages: ChatMessage[];
  maxTokens: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface ModelResult {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
}

/** One piece of a streamed function call, in OpenAI's shape: id and name come first, then argument fragments. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

/**
 * Filled in as an answer arrives, so a caller that aborts (client went away) still knows what was
 * produced and can save and bill it.
 */
export interface Progress {
  text: string;
  toolCalls: ToolCall[];
  promptTokens?: number;
  completionTokens?: number;
  /** True once anything was handed to `onDelta`/`onToolCall`: from then on nothing may be retried. */
  emitted: boolean;
}

export interface CallOptions {
  stream: boolean;
  onDelta?: (text: string) => void;
  onToolCall?: (delta: ToolCallDelta) => void;
  signal?: AbortSignal;
  progress?: Progress;
}
