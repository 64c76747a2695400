import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { isInitializeRequest, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { MAX_BATCH_SIZE, requestBodyTooLargeMessage } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { invalidParamsAnswer } from "./invalid-params.js";

/**
 * Streamable HTTP in its JSON-response mode (every POST answered with one JSON body), as one
 * long-lived SDK `Transport` per MCP server: the SDK's `McpServer` (version negotiation, JSON-RPC
 * dispatch, the tools' argument and result validation) stays connected to it and serves every
 * POST of its agent profile, concurrently.
 *
 * Why not the SDK's StreamableHTTPServerTransport here: in stateless mode it must be built, and
 * its server connected and closed, for every POST, and it converts each Node request and answer
 * to web `Request`/`Response` objects and back. That was most of what MCP added to a chat turn.
 * This transport makes the same HTTP-level decisions, in the same order and with the same status
 * codes and error bodies as the SDK's `handlePostRequest` (406, 415, 413, -32700, -32600, 400 for an
 * unsupported `MCP-Protocol-Version`, 202 for notifications only), which the tests compare
 * against the SDK's transport (automation agents keep it: their `run` streams progress as SSE).
 *
 * Request ids: clients all number their requests from 0 or 1, and one server now sees many
 * clients' requests at once, so each request goes to the server under an id of its own and its
 * answer goes back under the client's. A client that leaves before its answer cancels its
 * handlers (the SDK's `notifications/cancelled`, which aborts the tool call's signal).
 */

export interface HttpAnswer {
  status: number;
  /** The JSON body; none for 202. */
  body?: unknown;
}

const errorAnswer = (status: number, code: number, message: string): HttpAnswer => ({ status, body: { jsonrpc: "2.0", error: { code, message }, id: null } });

/** What the route knows of the POST: its headers, and its body as read (parsed when it is JSON within the limit). */
export interface JsonPost {
  headers: Record<string, string | string[] | undefined>;
  url: URL;
  body: { parsed?: unknown; tooLarge: boolean };
  maxBytes: number;
}

interface Exchange {
  answers: (JSONRPCMessage | undefined)[];
  waiting: number;
  done: (answers: JSONRPCMessage[]) => void;
}

interface InFlight {
  exchange: Exchange;
  slot: number;
  request: JSONRPCMessage & { id: RequestId; method: string };
}

const isRequest = (m: JSONRPCMessage): m is InFlight["request"] => "method" in m && "id" in m;

const header = (h: JsonPost["headers"], name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v.join(", ") : v;
};

export class JsonResponseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private nextId = 0;
  private readonly inFlight = new Map<number, InFlight>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    for (const [id] of this.inFlight) this.cancel(id, "The server is closing");
    this.onclose?.();
  }

  /** An answer of the server: back to the exchange that carried its request, under the client's id. */
  async send(message: JSONRPCMessage): Promise<void> {
    // Requests and notifications to the client have no stream to go on in JSON mode (as in the SDK's).
    if (!("id" in message) || "method" in message || typeof message.id !== "number") return;
    const entry = this.inFlight.get(message.id);
    if (!entry) return;
    this.inFlight.delete(message.id);
    const answer = invalidParamsAnswer(entry.request, message) ?? message;
    const { exchange, slot } = entry;
    exchange.answers[slot] = { ...answer, id: entry.request.id } as JSONRPCMessage;
    if (--exchange.waiting === 0) exchange.done(exchange.answers as JSONRPCMessage[]);
  }

  /**
   * One POST: the HTTP answer, once every request in it is answered. `signal` aborts when the
   * client leaves; its requests' handlers are then cancelled and nothing is answered.
   */
  async handle(post: JsonPost, extra: Pick<MessageExtraInfo, "authInfo">, signal: AbortSignal): Promise<HttpAnswer | undefined> {
    const accept = header(post.headers, "accept");
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
      return errorAnswer(406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream");
    }
    if (!isJsonContentType(header(post.headers, "content-type"))) return errorAnswer(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
    if (post.body.tooLarge) return errorAnswer(413, -32000, requestBodyTooLargeMessage(post.maxBytes));
    if (post.body.parsed === undefined) return errorAnswer(400, -32700, "Parse error: Invalid JSON");
    const raw = post.body.parsed;
    if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE) return errorAnswer(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const messages: JSONRPCMessage[] = [];
    for (const m of Array.isArray(raw) ? raw : [raw]) {
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) return errorAnswer(400, -32700, "Parse error: Invalid JSON-RPC message");
      messages.push(parsed.data);
    }
    const inits = messages.filter((m) => isRequest(m) && m.method === "initialize" && isInitializeRequest(m)).length;
    if (inits > 1) return errorAnswer(400, -32600, "Invalid Request: Only one initialization request is allowed");
    const version = header(post.headers, "mcp-protocol-version");
    if (inits === 0 && version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return errorAnswer(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`);
    }
    const info: MessageExtraInfo = { ...extra, requestInfo: { headers: post.headers, url: post.url } };
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      // Notifications and responses only. A client's cancellation names its own request id, which
      // means nothing here (stateless: its request may have gone to any instance): not passed on.
      for (const m of messages) if (!("method" in m) || m.method !== "notifications/cancelled") this.onmessage?.(m, info);
      return { status: 202 };
    }
    const answers = await new Promise<JSONRPCMessage[] | undefined>((resolve) => {
      const leave = () => {
        for (const id of ids) this.cancel(id, "The client disconnected");
        resolve(undefined);
      };
      // Named, not written into `exchange.done` as a function literal: V8 allocates such a literal
      // in the old generation, where it holds this request's scope (a2a/rate-limit-headers.ts).
      const done = (a: JSONRPCMessage[]) => {
        signal.removeEventListener("abort", leave);
        resolve(a);
      };
      const exchange: Exchange = { answers: requests.map(() => undefined), waiting: requests.length, done };
      const ids = requests.map((request, slot) => {
        const id = this.nextId++;
        this.inFlight.set(id, { exchange, slot, request });
        return id;
      });
      if (signal.aborted) return leave();
      signal.addEventListener("abort", leave, { once: true });
      let slot = 0;
      for (const m of messages) {
        if (isRequest(m)) this.onmessage?.({ ...m, id: ids[slot++]! }, info);
        else if (!("method" in m) || m.method !== "notifications/cancelled") this.onmessage?.(m, info);
      }
    });
    if (!answers) return undefined;
    // As the SDK's: one answer is sent alone, even for a batch of one request.
    return { status: 200, body: answers.length === 1 ? answers[0] : answers };
  }

  private cancel(id: number, reason: string): void {
    if (!this.inFlight.delete(id)) return;
    this.onmessage?.({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } });
  }

  /** Requests waiting for their answer (for tests and metrics). */
  get pending(): number {
    return this.inFlight.size;
  }
}
