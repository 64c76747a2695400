import { randomBase62 } from "../infra/ids.js";
import type { ToolCall, ToolCallDelta } from "../providers/types.js";
import type { TurnResult } from "./engine.js";
import type { ResponsesRequest } from "./responses-request.js";

/**
 * The Responses API's objects and stream events (shapes as in the `openai` SDK's
 * resources/responses/responses.d.ts: Response, ResponseOutputMessage, ResponseFunctionToolCall,
 * ResponseStreamEvent), built from one chat turn.
 */

export const outputText = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });

export function messageItem(id: string, text: string, status: "in_progress" | "completed") {
  return { id, type: "message", role: "assistant", status, content: status === "completed" ? [outputText(text)] : [] };
}

export function functionCallItem(id: string, call: ToolCall, status: "in_progress" | "completed") {
  return { id, type: "function_call", call_id: call.id, name: call.name, arguments: status === "completed" ? call.arguments : "", status };
}

export interface ResponseShell {
  id: string;
  created: number;
  model: string;
  threadId: string;
  previousResponseId: string | null;
  req: ResponsesRequest;
}

export function responseObject(shell: ResponseShell, r?: { output: unknown[]; text: string; result: TurnResult }) {
  const { req } = shell;
  const finish = r?.result.finishReason;
  const incomplete = finish === "length" ? { reason: "max_output_tokens" } : finish === "content_filter" ? { reason: "content_filter" } : null;
  return {
    id: shell.id,
    object: "response",
    created_at: shell.created,
    status: !r ? "in_progress" : incomplete ? "incomplete" : "completed",
    completed_at: r && !incomplete ? Math.floor(Date.now() / 1000) : null,
    background: false,
    error: null,
    incomplete_details: incomplete,
    instructions: req.instructions ?? null,
    max_output_tokens: req.maxTokens ?? null,
    metadata: req.metadata ?? {},
    model: shell.model,
    output: r?.output ?? [],
    output_text: r?.text ?? "",
    parallel_tool_calls: req.parallelToolCalls ?? true,
    previous_response_id: shell.previousResponseId,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: req.store,
    temperature: req.temperature ?? null,
    text: req.echo.text,
    tool_choice: req.echo.toolChoice,
    tools: req.echo.tools,
    top_p: req.topP ?? null,
    truncation: "disabled",
    usage: r
      ? {
          input_tokens: r.result.usage.prompt_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: r.result.usage.completion_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: r.result.usage.total_tokens,
        }
      : null,
    user: null,
    thread_id: shell.threadId,
  };
}

/** The output items of a finished turn: the text message (if any text), then one item per function call. */
export function outputItems(result: TurnResult, ids: { message: string; calls: string[] }) {
  const items: unknown[] = [];
  if (result.content) items.push(messageItem(ids.message, result.content, "completed"));
  result.toolCalls.forEach((c, i) => items.push(functionCallItem(ids.calls[i] ?? `fc_${randomBase62(24)}`, c, "completed")));
  return items;
}

/**
 * Turns text and tool-call deltas into the Responses event sequence: output_item.added,
 * content_part.added, output_text.delta … done, content_part.done, output_item.done for the
 * message; output_item.added, function_call_arguments.delta … done, output_item.done per call.
 * Items are opened in arrival order and each is closed before the next opens.
 */
export class ResponseEvents {
  private seq = 0;
  private index = -1;
  private open: { kind: "message"; id: string; text: string } | { kind: "call"; id: string; call: ToolCall; tool: number } | undefined;
  readonly messageId = `msg_${randomBase62(24)}`;
  readonly callIds: string[] = [];

  constructor(private readonly send: (type: string, data: Record<string, unknown>) => void) {}

  event(type: string, data: Record<string, unknown>): void {
    this.send(type, { type, ...data, sequence_number: this.seq++ });
  }

  text(delta: string): void {
    if (this.open?.kind !== "message") {
      this.close();
      this.index++;
      this.open = { kind: "message", id: this.messageId, text: "" };
      this.event("response.output_item.added", { output_index: this.index, item: messageItem(this.messageId, "", "in_progress") });
      this.event("response.content_part.added", { item_id: this.messageId, output_index: this.index, content_index: 0, part: outputText("") });
    }
    this.open.text += delta;
    this.event("response.output_text.delta", { item_id: this.messageId, output_index: this.index, content_index: 0, delta, logprobs: [] });
  }

  toolCall(d: ToolCallDelta): void {
    if (this.open?.kind !== "call" || this.open.tool !== d.index) {
      this.close();
      this.index++;
      const id = (this.callIds[d.index] = `fc_${randomBase62(24)}`);
      this.open = { kind: "call", id, call: { id: d.id ?? "", name: d.name ?? "", arguments: "" }, tool: d.index };
      this.event("response.output_item.added", { output_index: this.index, item: functionCallItem(id, this.open.call, "in_progress") });
    }
    if (!d.arguments) return;
    this.open.call.arguments += d.arguments;
    this.event("response.function_call_arguments.delta", { item_id: this.open.id, output_index: this.index, delta: d.arguments });
  }

  close(): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    if (o.kind === "message") {
      this.event("response.output_text.done", { item_id: o.id, output_index: this.index, content_index: 0, text: o.text, logprobs: [] });
      this.event("response.content_part.done", { item_id: o.id, output_index: this.index, content_index: 0, part: outputText(o.text) });
      this.event("response.output_item.done", { output_index: this.index, item: messageItem(o.id, o.text, "completed") });
    } else {
      this.event("response.function_call_arguments.done", { item_id: o.id, output_index: this.index, name: o.call.name, arguments: o.call.arguments });
      this.event("response.output_item.done", { output_index: this.index, item: functionCallItem(o.id, o.call, "completed") });
    }
  }
}
