import { createServer, type ServerResponse } from "node:http";

/**
 * Zero-think-time upstream for `npm run bench:chat`, in two wire formats:
 * - OpenAI: POST …/chat/completions (JSON, or SSE when the body says `"stream": true`);
 * - Anthropic Messages (the provider_b translation path): POST …/v1/messages, same two modes.
 * Both answer the same five-token text with the same usage. Prints its port on stdout.
 *
 * Slow mode (the 1,000-stream memory run): MOCK_CHUNK_DELAY_MS > 0 spaces the streamed text
 * chunks that far apart, MOCK_CHUNKS chunks in all, so each stream stays open for
 * MOCK_CHUNK_DELAY_MS × MOCK_CHUNKS.
 */
const DELAY_MS = Number(process.env.MOCK_CHUNK_DELAY_MS ?? 0);
const CHUNKS = Number(process.env.MOCK_CHUNKS ?? 5);
const WORDS = ["Hello", " from", " the", " mock", " upstream."];
const TEXT = WORDS.join("");
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

const openAiJson = JSON.stringify({
  id: "chatcmpl-mock",
  object: "chat.completion",
  created: 1,
  model: "mock",
  choices: [{ index: 0, message: { role: "assistant", content: TEXT }, finish_reason: "stop" }],
  usage,
});
const oaChunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: "mock", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const openAiSse = {
  head: oaChunk({ role: "assistant", content: "" }, null),
  text: (t: string) => oaChunk({ content: t }, null),
  tail:
    oaChunk({}, "stop") +
    `data: ${JSON.stringify({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: "mock", choices: [], usage })}\n\n` +
    "data: [DONE]\n\n",
};

const anthropicJson = JSON.stringify({
  id: "msg_mock",
  type: "message",
  role: "assistant",
  model: "mock-claude",
  content: [{ type: "text", text: TEXT }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 5 },
});
const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const anthropicSse = {
  head:
    ev("message_start", {
      message: { id: "msg_mock", type: "message", role: "assistant", model: "mock-claude", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
    }) + ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  text: (t: string) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: t } }),
  tail:
    ev("content_block_stop", { index: 0 }) +
    ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }) +
    ev("message_stop", {}),
};
// The tool path (a request that offers tools): the same text, then one tool_use block with its
// input streamed as input_json_delta fragments, stop_reason tool_use (Anthropic format only).
// A request whose last message carries a tool_result (the second half of a tool round trip) is
// answered with text, as the real API does once it has the tool's result.
const anthropicToolJson = JSON.stringify({
  ...JSON.parse(anthropicJson),
  content: [{ type: "text", text: TEXT }, { type: "tool_use", id: "toolu_mock", name: "get_weather", input: { city: "Paris" } }],
  stop_reason: "tool_use",
});
const anthropicToolSse =
  anthropicSse.head +
  WORDS.map(anthropicSse.text).join("") +
  ev("content_block_stop", { index: 0 }) +
  ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_mock", name: "get_weather", input: {} } }) +
  ['{"city"', ':"Par', 'is"}'].map((p) => ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: p } })).join("") +
  ev("content_block_stop", { index: 1 }) +
  ev("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } }) +
  ev("message_stop", {});

/** Whether the last message of an Anthropic request is a user turn carrying a tool_result block. */
function answersToolCall(body: string): boolean {
  if (!body.includes("tool_result")) return false;
  try {
    const last = (JSON.parse(body) as { messages?: { role: string; content: unknown }[] }).messages?.at(-1);
    return last?.role === "user" && Array.isArray(last.content) && last.content.some((b: { type?: string }) => b?.type === "tool_result");
  } catch {
    return false;
  }
}

const whole = (f: typeof openAiSse) => f.head + WORDS.map(f.text).join("") + f.tail;
const openAiSseWhole = whole(openAiSse);
const anthropicSseWhole = whole(anthropicSse);

function slowStream(res: ServerResponse, f: typeof openAiSse): void {
  res.write(f.head);
  let i = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return void clearInterval(timer);
    if (i < CHUNKS) return void res.write(f.text(WORDS[i++ % WORDS.length]!));
    clearInterval(timer);
    res.end(f.tail);
  }, DELAY_MS);
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const url = req.url ?? "";
    const anthropic = url.endsWith("/v1/messages");
    if (req.method !== "POST" || !(anthropic || url.endsWith("/chat/completions"))) return void res.writeHead(404).end();
    const tools = anthropic && /"tools"\s*:\s*\[/.test(body) && !answersToolCall(body);
    if (/"stream"\s*:\s*true/.test(body)) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      if (tools) return void res.end(anthropicToolSse);
      if (DELAY_MS > 0) return slowStream(res, anthropic ? anthropicSse : openAiSse);
      return void res.end(anthropic ? anthropicSseWhole : openAiSseWhole);
    }
    res.writeHead(200, { "content-type": "application/json" }).end(tools ? anthropicToolJson : anthropic ? anthropicJson : openAiJson);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", 2048, () => {
  const addr = server.address();
  process.stdout.write(`${typeof addr === "object" && addr ? addr.port : 0}\n`);
});
