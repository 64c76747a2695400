import { createServer } from "node:http";

/**
 * Zero-think-time OpenAI-compatible upstream for `npm run bench:chat`: answers every
 * POST …/chat/completions at once, as JSON or as a short SSE stream (when the body asks for it);
 * a request with tools gets one function call (the tool path). Prints its port on stdout.
 */
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const json = JSON.stringify({
  id: "chatcmpl-mock",
  object: "chat.completion",
  created: 1,
  model: "mock",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the mock upstream." }, finish_reason: "stop" }],
  usage,
});
const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: "mock", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const sse =
  chunk({ role: "assistant", content: "" }, null) +
  ["Hello", " from", " the", " mock", " upstream."].map((t) => chunk({ content: t }, null)).join("") +
  chunk({}, "stop") +
  `data: ${JSON.stringify({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: "mock", choices: [], usage })}\n\n` +
  "data: [DONE]\n\n";

const call = { id: "call_mock", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } };
const toolJson = JSON.stringify({
  id: "chatcmpl-mock",
  object: "chat.completion",
  created: 1,
  model: "mock",
  choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }],
  usage,
});
const toolSse =
  chunk({ role: "assistant", content: null }, null) +
  chunk({ tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }, null) +
  ['{"city"', ':"Par', 'is"}'].map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }, null)).join("") +
  chunk({}, "tool_calls") +
  `data: ${JSON.stringify({ id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: "mock", choices: [], usage })}\n\n` +
  "data: [DONE]\n\n";

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) return void res.writeHead(404).end();
    const tools = /"tools"\s*:\s*\[/.test(body);
    if (/"stream"\s*:\s*true/.test(body)) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      return void res.end(tools ? toolSse : sse);
    }
    res.writeHead(200, { "content-type": "application/json" }).end(tools ? toolJson : json);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const addr = server.address();
  process.stdout.write(`${typeof addr === "object" && addr ? addr.port : 0}\n`);
});
