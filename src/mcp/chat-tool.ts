import { z } from "zod";
import { executeTurn } from "../chat/engine.js";
import { inFlightTurns } from "../chat/in-flight.js";
import { parseChatRequest } from "../chat/request.js";
import type { Runtime } from "../runtime/runtime.js";
import { toolErrorFrom, toolSuccess } from "./tool-result.js";
import { defineTool, type ToolSpec } from "./tool-spec.js";

/**
 * `chat` on a chat agent: one turn of the chat engine, exactly as POST /api/v1/chat/completions
 * with one user message makes it (the key's rate limit, the hold and settle, thread_busy, stored
 * messages, usage rows). A thread opened here continues over chat completions with its thread_id,
 * and the other way round.
 */
// Built once, with the servers.
const INPUT = {
  message: z.string().min(1).describe("The user message"),
  thread_id: z.string().min(1).max(255).optional().describe("Continue this thread (from an earlier answer); omit to start a new one"),
};
const OUTPUT = {
  answer: z.string().describe("The agent's answer"),
  thread_id: z.string().describe("The thread this turn belongs to"),
};

export function chatTool(runtime: Runtime, agentName: string): ToolSpec {
  return defineTool({
    name: "chat",
    title: `Chat with ${agentName}`,
    description:
      `Send a message to the agent "${agentName}" and get its answer. The answer names its thread_id: ` +
      "pass it back to continue the same conversation (the agent remembers the thread's earlier messages).",
    input: INPUT,
    output: OUTPUT,
    annotations: { title: `Chat with ${agentName}`, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    call: async ({ message, thread_id }, { principal, signal }) => {
      try {
        // The chat API's own validation, so both surfaces accept and refuse the same messages.
        const chat = parseChatRequest({ messages: [{ role: "user", content: message }], ...(thread_id !== undefined ? { thread_id } : {}) });
        // A graceful stop cuts it like a chat completion: the hold released, the error a 503's.
        const turn = await inFlightTurns(runtime).run(signal, (turnSignal) =>
          executeTurn(
            runtime,
            {
              agent: principal.agent,
              keyId: principal.keyId,
              threadId: chat.threadId,
              messages: chat.messages,
              rateLimit: { keyId: principal.keyId, limit: principal.rateLimitPerMinute },
            },
            { signal: turnSignal },
          ),
        );
        return toolSuccess(turn.content, { answer: turn.content, thread_id: turn.threadId });
      } catch (err) {
        return toolErrorFrom(err, runtime.log);
      }
    },
  });
}
