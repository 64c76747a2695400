import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Test-only fake model providers on one local HTTP server, speaking provider A's (Gemini-style),
 * provider B's (Anthropic-style) and the OpenAI wire formats. It records every request so tests
 * can assert what the gateway sent. Behaviour is steered by a marker in the last user message:
 * #fail500, #fail400, #flaky503 (503 once per marker text, then OK), #slow (400 ms), #hang,
 * #cut (streams one chunk, then stalls).
 */
export interface Recorded {
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export interface FakeUpstream {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

function lastUserText(path: string, body: any): string {
  if (path.includes("/v1beta/")) {
    const turns = (body?.contents ?? []).filter((c: any) => c.role === "user");
    return turns.at(-1)?.parts?.map((p: any) => p.text).join("") ?? "";
  }
  const turns = (body?.messages ?? []).filter((m: any) => m.role === "user");
  const c = turns.at(-1)?.content;
  return typeof c === "string" ? c : "";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: Recorded[] = [];
  const flakySeen = new Set<string>();
  const open = new Set<ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const path = req.url ?? "";
    requests.push({ path, headers: req.headers, body });
    const text = lastUserText(path, body);
    if (text.includes("#fail500")) return void res.writeHead(500).end("{}");
    if (text.includes("#fail400")) return void res.writeHead(400).end('{"error":"bad"}');
    if (text.includes("#flaky503") && !flakySeen.has(text)) {
      flakySeen.add(text);
      return void res.writeHead(503).end("{}");
    }
    if (text.includes("#hang")) return; // never answers; the gateway's timeout must fire
    if (text.includes("#slow")) await sleep(400);
    const cut = text.includes("#cut");
    const stream = path.includes("streamGenerateContent") || body?.stream === true;
    const sse = () => res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (data: unknown, event?: string) => res.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);

    if (path.includes("/v1beta/")) {
      const parts = ["Hello", " from", " A"];
      const usage = { promptTokenCount: 11, candidatesTokenCount: 3, totalTokenCount: 14 };
      if (!stream) {
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: parts.join("") }] }, finishReason: "STOP" }], usageMetadata: usage }));
      }
      sse();
      for (const [i, p] of parts.entries()) {
        send({ candidates: [{ content: { role: "model", parts: [{ text: p }] } }] });
        if (cut && i === 0) return; // stall with the connection open
      }
      send({ candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" }], usageMetadata: usage });
      return void res.end();
    }
    if (path === "/v1/messages") {
      const parts = ["Hello", " from", " B"];
      if (!stream) {
        return void res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: body.model,
            content: [{ type: "text", text: parts.join("") }],
            stop_reason: "end_turn",
            usage: { input_tokens: 12, output_tokens: 4 },
          }),
        );
      }
      sse();
      send({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], usage: { input_tokens: 12, output_tokens: 1 } } }, "message_start");
      send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start");
      send({ type: "ping" }, "ping");
      for (const [i, p] of parts.entries()) {
        send({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }, "content_block_delta");
        if (cut && i === 0) return;
      }
      send({ type: "content_block_stop", index: 0 }, "content_block_stop");
      send({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 4 } }, "message_delta");
      send({ type: "message_stop" }, "message_stop");
      return void res.end();
    }
    if (path.endsWith("/chat/completions")) {
      const content = "Hello from compat";
      if (!stream) {
        return void res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "c1",
            object: "chat.completion",
            created: 1,
            model: body.model,
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
            usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
          }),
        );
      }
      sse();
      send({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } , finish_reason: null }] });
      send({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
      send({ id: "c1", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } });
      return void res.end("data: [DONE]\n\n");
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
