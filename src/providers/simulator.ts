import { estimateTokens, messageText } from "./mapping.js";
import type { CallOptions, ModelRequest, ModelResult } from "./types.js";

/**
 * The built-in simulator for dev mode without provider credentials: a deterministic reply that
 * shows the request made it through the gateway (model, turn count, last user message), streamed
 * word by word so streaming clients see real chunks.
 */
export async function simulate(req: ModelRequest, options: CallOptions): Promise<ModelResult> {
  const lastUser = [...req.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const turns = req.messages.filter((m) => m.role !== "system").length;
  const quoted = lastUser.length > 200 ? `${lastUser.slice(0, 200)}…` : lastUser;
  let reply = `[simulated ${req.model}] You said: "${quoted}" (message ${turns} of this thread). Configure provider credentials for real answers.`;
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
