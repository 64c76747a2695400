import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Test-only fake model providers on one local HTTP server, speaking provider A's (Gemini-style),
 * provider B's (Anthropic-style) and the OpenAI wire formats. It records every request so tests
 * can assert what the gateway sent. Behaviour is steered by a marker in the last user message:
 * #fail500, #fail400, #fail401, #reject (a 400 in the provider's error shape that echoes the API
 * key), #flaky503 (503 once per marker text, then OK), #slow (400 ms), #hang, #cut (streams one
 * chunk, then stalls), #midfail (an error event after the first chunk), #trickle (chunks 400 ms
 * apart: longer than a 1 s idle timeout in total, never idle that long), #badtext (answers text, and
 * tool-call ids and arguments, with NUL and unpaired surrogates, as a provider may: BAD_TEXT).
 *
 * Tools, images and structured output follow the providers' references (see test/fixtures/):
 * with tools offered and no tool results in the last user turn, the fake calls the offered tools
 * (all of them, at most two, unless the request limits it to one or names one), with arguments made
 * from each tool's schema; with tool results it answers in text quoting them. A JSON response
 * format gets JSON made from the schema. Like the real APIs, it answers 400 (in the provider's
 * error shape) to requests that break the format: tool results without their call, non-alternating
 * roles, empty text blocks, provider_b temperature above 1, provider_b tool_use/tool_result blocks
 * in a request that defines no tools.
 */
export interface Recorded {
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export interface FakeUpstream {
  url: string;
  requests: Recorded[];
  /** While set, every request answers this HTTP status (a provider outage), recorded all the same. */
  outage: number | undefined;
  close(): Promise<void>;
}

function lastUserText(path: string, body: any): string {
  if (path.includes("/v1beta/")) {
    const turns = (body?.contents ?? []).filter((c: any) => c.role === "user");
    return turns.at(-1)?.parts?.map((p: any) => p.text ?? "").join("") ?? "";
  }
  const turns = (body?.messages ?? []).filter((m: any) => m.role === "user");
  const c = turns.at(-1)?.content;
  if (Array.isArray(c)) return c.map((b: any) => (b.type === "text" ? b.text : "")).join("");
  return typeof c === "string" ? c : "";
}

/** A value that fits a JSON schema (enough for object/array/string/number/boolean/enum). */
export function sampleOf(schema: any): unknown {
  if (!schema || typeof schema !== "object") return "x";
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "object" || schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = sampleOf(v);
    return out;
  }
  if (type === "array") return [sampleOf(schema.items)];
  if (type === "integer" || type === "number") return 2;
  if (type === "boolean") return true;
  return "Paris";
}

/** What #badtext answers: text PostgreSQL cannot store as it is (a NUL, a lone high and a lone low surrogate). */
export const BAD_TEXT = "Bad\u0000 text \ud800 here \udc00!";

/** The answer with BAD_TEXT for its text and spoilt tool-call ids (provider_b and the OpenAI format carry ids). */
const spoil = (p: Plan): Plan => ({ text: BAD_TEXT, calls: p.calls.map((c) => ({ ...c, id: `${c.id}\ud800`, args: { ...c.args, bad: "\u0000\udfff" } })) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Splits a string into three fragments, as providers stream argument JSON. */
const thirds = (s: string) => {
  const a = Math.ceil(s.length / 3);
  return [s.slice(0, a), s.slice(a, 2 * a), s.slice(2 * a)].filter(Boolean);
};

/** provider_b (Anthropic Messages) request checks the real API makes; returns an error message or undefined. */
function checkB(body: any): string | undefined {
  const msgs: any[] = body?.messages ?? [];
  if (typeof body?.max_tokens !== "number") return "max_tokens: Field required";
  if (typeof body?.temperature === "number" && body.temperature > 1) return "temperature: Input should be less than or equal to 1";
  const toolBlocks = msgs.some((m) => Array.isArray(m.content) && m.content.some((b: any) => b.type === "tool_use" || b.type === "tool_result"));
  if (toolBlocks && !(Array.isArray(body?.tools) && body.tools.length)) return "Requests which include `tool_use` or `tool_result` blocks must define tools.";
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (i > 0 && msgs[i - 1].role === m.role) return `messages: roles must alternate between "user" and "assistant"`;
    const blocks = Array.isArray(m.content) ? m.content : [];
    if (typeof m.content === "string" && m.content === "" && i < msgs.length - 1) return `messages.${i}: all messages must have non-empty content`;
    for (const b of blocks) {
      if (b.type === "text" && !b.text) return `messages.${i}.content: text content blocks must be non-empty`;
      if (b.type === "tool_result") {
        const prev = msgs[i - 1];
        const ids = (Array.isArray(prev?.content) ? prev.content : []).filter((x: any) => x.type === "tool_use").map((x: any) => x.id);
        if (!ids.includes(b.tool_use_id)) return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}`;
      }
      if (b.type === "image" && !["base64", "url"].includes(b.source?.type)) return `messages.${i}.content: invalid image source`;
    }
  }
  return undefined;
}

/** provider_a (Gemini generateContent) request checks; Gemini 3 models also check thought signatures. */
function checkA(body: any, path: string): string | undefined {
  const contents: any[] = body?.contents ?? [];
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const firstCall = (c.parts ?? []).find((p: any) => p.functionCall);
    if (path.includes("/model-3") && firstCall && typeof firstCall.thoughtSignature !== "string") {
      return `Function call \`${firstCall.functionCall.name}\` in the ${i + 1}. content block is missing a \`thought_signature\`.`;
    }
    if (!["user", "model"].includes(c.role)) return `contents[${i}].role: invalid role ${c.role}`;
    if (!Array.isArray(c.parts) || c.parts.length === 0) return `contents[${i}].parts: must not be empty`;
    for (const p of c.parts) {
      if (p.functionResponse) {
        const prev = contents[i - 1];
        const names = (prev?.parts ?? []).filter((x: any) => x.functionCall).map((x: any) => x.functionCall.name);
        if (!names.includes(p.functionResponse.name)) return `contents[${i}]: function response parts must follow a function call turn naming ${p.functionResponse.name}`;
        if (typeof p.functionResponse.response !== "object") return `contents[${i}]: functionResponse.response must be an object`;
      }
      if (p.inlineData && (typeof p.inlineData.mimeType !== "string" || typeof p.inlineData.data !== "string")) return `contents[${i}]: invalid inlineData`;
    }
  }
  return undefined;
}

interface Plan {
  text: string;
  calls: { id: string; name: string; args: Record<string, unknown> }[];
}

/** What the fake answers: tool calls, a JSON document, or text. */
function plan(provider: "a" | "b", body: any, text: string, base: string): Plan {
  let tools: { name: string; schema: any }[] = [];
  let toolResults: string[] = [];
  let limitOne = false;
  let images = 0;
  let json: any;
  if (provider === "b") {
    tools = (body.tools ?? []).map((t: any) => ({ name: t.name, schema: t.input_schema }));
    const tc = body.tool_choice;
    if (tc?.type === "none") tools = [];
    if (tc?.type === "tool") tools = tools.filter((t) => t.name === tc.name);
    limitOne = tc?.disable_parallel_tool_use === true;
    const last = (body.messages ?? []).at(-1);
    const blocks = Array.isArray(last?.content) ? last.content : [];
    toolResults = blocks.filter((b: any) => b.type === "tool_result").map((b: any) => (typeof b.content === "string" ? b.content : JSON.stringify(b.content)));
    images = (body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === "image").length;
    if (body.output_config?.format?.type === "json_schema") json = sampleOf(body.output_config.format.schema);
    else if (typeof body.system === "string" && body.system.includes("JSON object")) json = { ok: true };
  } else {
    tools = (body.tools ?? []).flatMap((t: any) => t.functionDeclarations ?? []).map((f: any) => ({ name: f.name, schema: f.parametersJsonSchema ?? f.parameters }));
    const fc = body.toolConfig?.functionCallingConfig;
    if (fc?.mode === "NONE") tools = [];
    if (Array.isArray(fc?.allowedFunctionNames)) tools = tools.filter((t) => fc.allowedFunctionNames.includes(t.name));
    const last = (body.contents ?? []).at(-1);
    toolResults = (last?.parts ?? []).filter((p: any) => p.functionResponse).map((p: any) => JSON.stringify(p.functionResponse.response));
    images = (body.contents ?? []).flatMap((c: any) => c.parts ?? []).filter((p: any) => p.inlineData || p.fileData).length;
    const g = body.generationConfig ?? {};
    if (g.responseMimeType === "application/json") json = g.responseJsonSchema || g.responseSchema ? sampleOf(g.responseJsonSchema ?? g.responseSchema) : { ok: true };
  }
  if (tools.length && toolResults.length === 0) {
    const chosen = tools.slice(0, limitOne ? 1 : 2);
    return {
      text: text.includes("#silentcall") ? "" : "Let me check.",
      calls: chosen.map((t, i) => ({ id: `${provider === "b" ? "toolu_" : "fc_"}${Math.random().toString(36).slice(2, 10)}${i}`, name: t.name, args: sampleOf(t.schema) as Record<string, unknown> })),
    };
  }
  if (toolResults.length) return { text: `Tool results: ${toolResults.join(" | ")}`, calls: [] };
  if (json !== undefined) return { text: JSON.stringify(json), calls: [] };
  return { text: images ? `${base} (saw ${images} image${images > 1 ? "s" : ""})` : base, calls: [] };
}

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
    if (fake.outage) return void res.writeHead(fake.outage, { "content-type": "application/json" }).end('{"error":{"message":"overloaded"}}');
    const text = lastUserText(path, body);
    const isA = path.includes("/v1beta/");
    const isB = path === "/v1/messages";
    const fail = (status: number, message: string) =>
      void res
        .writeHead(status, { "content-type": "application/json" })
        .end(
          JSON.stringify(
            isA ? { error: { code: status, message, status: "INVALID_ARGUMENT" } } : { type: "error", error: { type: "invalid_request_error", message } },
          ),
        );
    if (text.includes("#fail500")) return void res.writeHead(500).end("{}");
    if (text.includes("#fail400")) return void res.writeHead(400).end('{"error":"bad"}');
    if (text.includes("#fail401")) return fail(401, `invalid x-api-key ${String(req.headers["x-api-key"] ?? req.headers["x-goog-api-key"])}`);
    if (text.includes("#reject")) return fail(400, `Unsupported value; your key ${String(req.headers["x-api-key"] ?? req.headers["x-goog-api-key"])} is fine`);
    if (text.includes("#flaky503") && !flakySeen.has(text)) {
      flakySeen.add(text);
      return void res.writeHead(503).end("{}");
    }
    if (text.includes("#hang")) return; // never answers; the gateway's timeout must fire
    if (text.includes("#slow")) await sleep(400);
    const formatError = isA ? checkA(body, path) : isB ? checkB(body) : undefined;
    if (formatError) return fail(400, formatError);
    const cut = text.includes("#cut");
    const midfail = text.includes("#midfail");
    const trickle = text.includes("#trickle");
    const stream = path.includes("streamGenerateContent") || body?.stream === true;
    const sse = () => res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (data: unknown, event?: string) => res.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);

    if (isA) {
      const answer = text.includes("#badtext") ? spoil(plan("a", body, text, "Hello from A")) : plan("a", body, text, "Hello from A");
      const parts = answer.calls.length || answer.text !== "Hello from A" ? [answer.text] : ["Hello", " from", " A"];
      if (trickle) parts.push(" and", " more", " text");
      const usage = { promptTokenCount: 11, candidatesTokenCount: 3, totalTokenCount: 14 };
      // Gemini 3 signs the first function call of a step (thoughtSignature, opaque).
      const callParts = answer.calls.map((c, i) => ({ functionCall: { name: c.name, args: c.args }, ...(i === 0 && path.includes("/model-3") ? { thoughtSignature: `sig-${c.id}` } : {}) }));
      if (!stream) {
        const all = [...(answer.text ? [{ text: answer.text }] : []), ...callParts];
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ candidates: [{ content: { role: "model", parts: all }, finishReason: "STOP", index: 0 }], usageMetadata: usage, modelVersion: "fake" }));
      }
      sse();
      for (const [i, p] of parts.entries()) {
        if (!p) continue;
        send({ candidates: [{ content: { role: "model", parts: [{ text: p }] }, index: 0 }], modelVersion: "fake" });
        if (cut && i === 0) return; // stall with the connection open
        if (midfail && i === 0) return void res.end(`data: ${JSON.stringify({ error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } })}\n\n`);
        if (trickle) await sleep(400);
      }
      // Gemini streams each function call whole, in one chunk.
      if (callParts.length) send({ candidates: [{ content: { role: "model", parts: callParts }, index: 0 }], modelVersion: "fake" });
      send({ candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP", index: 0 }], usageMetadata: usage, modelVersion: "fake" });
      return void res.end();
    }
    if (isB) {
      const answer = text.includes("#badtext") ? spoil(plan("b", body, text, "Hello from B")) : plan("b", body, text, "Hello from B");
      const parts = answer.calls.length || answer.text !== "Hello from B" ? [answer.text] : ["Hello", " from", " B"];
      if (trickle) parts.push(" and", " more", " text");
      const stopReason = answer.calls.length ? "tool_use" : "end_turn";
      if (!stream) {
        return void res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: body.model,
            content: [
              ...(answer.text ? [{ type: "text", text: answer.text }] : []),
              ...answer.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args })),
            ],
            stop_reason: stopReason,
            stop_sequence: null,
            usage: { input_tokens: 12, output_tokens: 4 },
          }),
        );
      }
      sse();
      send({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }, "message_start");
      let block = 0;
      if (answer.text) {
        send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start");
        send({ type: "ping" }, "ping");
        for (const [i, p] of parts.entries()) {
          send({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }, "content_block_delta");
          if (cut && i === 0) return;
          if (midfail && i === 0) {
            send({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "error");
            return void res.end();
          }
          if (trickle) await sleep(400);
        }
        send({ type: "content_block_stop", index: 0 }, "content_block_stop");
        block = 1;
      }
      for (const c of answer.calls) {
        send({ type: "content_block_start", index: block, content_block: { type: "tool_use", id: c.id, name: c.name, input: {} } }, "content_block_start");
        send({ type: "content_block_delta", index: block, delta: { type: "input_json_delta", partial_json: "" } }, "content_block_delta");
        for (const f of thirds(JSON.stringify(c.args))) send({ type: "content_block_delta", index: block, delta: { type: "input_json_delta", partial_json: f } }, "content_block_delta");
        send({ type: "content_block_stop", index: block }, "content_block_stop");
        block++;
      }
      send({ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 4 } }, "message_delta");
      send({ type: "message_stop" }, "message_stop");
      return void res.end();
    }
    if (path.endsWith("/chat/completions")) {
      const content = text.includes("#badtext") ? BAD_TEXT : "Hello from compat";
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
  const fake: FakeUpstream = {
    url: `http://127.0.0.1:${port}`,
    requests,
    outage: undefined,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return fake;
}
