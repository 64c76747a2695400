import { estimateTokens, messageText } from "./mapping.js";
import { randomBase62 } from "../infra/ids.js";
import type { CallOptions, ModelRequest, ModelResult, ToolCall } from "./types.js";

/** An example value for a JSON schema: what the simulator passes as tool arguments or answers as JSON. */
function example(schema: any): unknown {
  if (!schema || typeof schema !== "object") return "example";
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "object" || schema.properties) return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, example(v)]));
  if (type === "array") return [example(schema.items)];
  if (type === "integer" || type === "number") return 1;
  if (type === "boolean") return true;
  return "example";
}

/**
 * With tools offered (and not refused by tool_choice none) and no tool results yet, the simulator
 * calls one tool, so agent loops can be tried out in dev mode without credentials.
 */
function simulatedCall(req: ModelRequest): ToolCall | undefined {
  const last = req.messages.filter((m) => m.role !== "system").at(-1);
  if (!req.tools?.length || req.toolChoice === "none" || last?.role === "tool") return undefined;
  const tool = typeof req.toolChoice === "object" ? req.tools.find((t) => t.name === (req.toolChoice as { name: string }).name)! : req.tools[0]!;
  return { id: `call_${randomBase62(24)}`, name: tool.name, arguments: JSON.stringify(example(tool.parameters ?? {})) };
}

/**
 * The built-in simulator for dev mode without provider credentials: a deterministic reply that
 * shows the request made it through the gateway (model, turn count, last user message), streamed
 * word by word so streaming clients see real chunks. It calls an offered tool once and answers
 * JSON for a JSON response format.
 */
export async function simulate(req: ModelRequest, options: CallOptions): Promise<ModelResult> {
  const call = simulatedCall(req);
  if (call) {
    const prompt = estimateTokens(req.messages.map(messageText).join("\n"));
    if (options.progress) Object.assign(options.progress, { promptTokens: prompt, toolCalls: [call], emitted: true });
    if (options.stream) options.onToolCall?.({ index: 0, id: call.id, name: call.name, arguments: call.arguments });
    return { content: "", toolCalls: [call], finishReason: "tool_calls", usage: { promptTokens: prompt, completionTokens: estimateTokens(call.name + call.arguments) } };
  }
  const lastUser = [...req.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const turns = req.messages.filter((m) => m.role !== "system").length;
  const quoted = lastUser.length > 200 ? `${lastUser.slice(0, 200)}…` : lastUser;
  const rf = req.responseFormat;
  const toolResult = req.messages.at(-1)?.role === "tool" ? ` Tool results: ${req.messages.filter((m, i) => m.role === "tool" && i >= req.messages.findLastIndex((x) => x.role === "assistant")).map((m) => m.content).join(" | ")}.` : "";
  let reply =
    rf?.type === "json_schema"
      ? JSON.stringify(example(rf.schema))
      : rf?.type === "json_object"
        ? JSON.stringify({ simulated: true, model: req.model })
        : `[simulated ${req.model}] You said: "${quoted}" (message ${turns} of this thread).${toolResult} Configure provider credentials for real answers.`;
  let finishReason: ModelResult["finishReason"] = "stop";
  const words = reply.split(/(?<= )/);
  if (words.length > req.maxTokens) {
    reply = words.slice(0, req.maxTokens).join("");
    finishReason = "length";
  }
  const progress = options.progress;
  const prompt = estimateTokens(req.messages.map(messageText).join("\n"));
  if (progress) progress.promptTokens = prompt;
  if (options.stream) {
    for (const word of reply.split(/(?<= )/)) {
      if (options.signal?.aborted) break;
      if (progress) {
        progress.text += word;
        progress.emitted = true;
      }
      options.onDelta?.(word);
      await new Promise((r) => setImmediate(r));
    }
  } else if (progress) progress.text = reply;
  return { content: reply, toolCalls: [], finishReason, usage: { promptTokens: prompt, completionTokens: estimateTokens(reply) } };
}
