import express, { type ErrorRequestHandler, type Request, type Response } from "express";
import { AgentCard, formatSSEEvent } from "@a2a-js/sdk";
import { defaultServerCallContextBuilder, JsonRpcTransportHandler, validateVersion, type User } from "@a2a-js/sdk/server";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { A2AError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { findPublicAgent, type PublicAgent } from "../agents/agent-info.js";
import { agentKeyAuth } from "../keys/agent-key.js";
import { bearerChallenge, reasonPhrase } from "../http/auth.js";
import { a2aResourceMetadataPath } from "../oauth/resources.js";
import { SseResponse } from "../chat/sse.js";
import type { RouteModule } from "../http/server.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { defaultCard, etagOf, v03Card, v1Card } from "./card.js";
import { appErrorToJsonRpc, envelopeError, internalJsonRpcError, INTERNAL_ERROR, INVALID_PARAMS, type JsonRpcError } from "./errors.js";
import { CALL_STATE, isLegacyVersion, type CallState } from "./call.js";
import { noteRateLimit, rateLimitHeadersOnWrite } from "./rate-limit-headers.js";
import { GatewayA2AHandler } from "./handler.js";
import { listenForChatCancels } from "./chat-task.js";
import { restBinding } from "./rest.js";

/**
 * Every agent is an A2A server at /api/a2a/<agent_id> (docs/design/a2a.md): its public card, and the
 * JSON-RPC binding in v1.0 and v0.3 (chosen by the A2A-Version header; absent means 0.3). The
 * official SDK's transport handlers parse, validate and serialize both versions; the gateway's
 * handler (handler.ts) does the work; this module authenticates, picks the version and writes
 * the HTTP answer (JSON or SSE).
 */

const MAX_BODY = "8mb";
const HEARTBEAT_MS = 15_000;
const CARD_MAX_AGE = 300;

async function publicAgent(runtime: Runtime, id: string): Promise<PublicAgent> {
  const agent = typeof id === "string" && id.length <= 100 ? await findPublicAgent(runtime.pool, id) : undefined;
  if (!agent) throw new AppError("not_found", "Agent not found");
  return agent;
}

export const a2aRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  const auth = agentKeyAuth(runtime);
  // CancelTask on another instance reaches the chat turns this one runs.
  listenForChatCancels(runtime);

  const card = (legacyOnly: boolean) => async (req: Request, res: Response) => {
    const agent = await publicAgent(runtime, String(req.params.agentId));
    // Each version its own shape; no version at all: the v1.0 card with v0.3's extra fields (card.ts).
    const version = req.get("a2a-version");
    const base = runtime.config.publicBaseUrl;
    const body = JSON.stringify(legacyOnly || (version && isLegacyVersion(version)) ? v03Card(agent, base, !legacyOnly) : version ? v1Card(agent, base) : defaultCard(agent, base));
    res.setHeader("ETag", etagOf(body));
    res.setHeader("Cache-Control", `public, max-age=${CARD_MAX_AGE}`);
    res.setHeader("Vary", "A2A-Version");
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    res.type("application/json").send(body);
  };
  router.get("/:agentId/.well-known/agent-card.json", card(false));
  router.get("/:agentId/.well-known/agent.json", card(true));

  // What the SDK's transports read of the card on each call (the versions and streaming) is the
  // same for every agent: no database read per call for it.
  const capabilities = AgentCard.fromJSON({
    supportedInterfaces: [
      { url: runtime.config.publicBaseUrl, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: runtime.config.publicBaseUrl, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: runtime.config.publicBaseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: runtime.config.publicBaseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" },
    ],
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
  });
  const handler = new GatewayA2AHandler(runtime, async () => capabilities);
  // The transports keep no per-call state (the call's context comes with each call): one of each.
  const v1Transport = new JsonRpcTransportHandler(handler);
  const legacyTransport = new LegacyJsonRpcTransportHandler(handler);

  /** The JSON-RPC error and HTTP status of a failed call; sets the error's headers. */
  const failure = (res: Response, legacy: boolean, err: unknown, fallback?: JsonRpcError): { status: number; error: JsonRpcError } => {
    let status = 200;
    let error: JsonRpcError;
    if (err instanceof AppError) {
      ({ httpStatus: status, error } = appErrorToJsonRpc(err, legacy));
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      if (err.status === 401) {
        // What is wrong with the key, where each client looks: the challenge (RFC 6750) and the
        // status line, the only part of a 401 the Python a2a-sdk prints (docs/design/a2a.md).
        const sent = !!(res.req.get("authorization") || res.req.get("x-api-key"));
        // resource_metadata (RFC 9728) lets an OAuth client find the authorization server (src/oauth).
        const metadata = runtime.config.publicBaseUrl + a2aResourceMetadataPath(String(res.req.params.agentId ?? ""));
        res.setHeader("WWW-Authenticate", bearerChallenge({ realm: "a2a", resource_metadata: metadata }, sent ? err.message : undefined));
        res.statusMessage = reasonPhrase("Unauthorized", err.message);
      }
    } else if (fallback) error = fallback;
    else if (err instanceof A2AError) error = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err) : JsonRpcTransportHandler.mapToJSONRPCError(err);
    else {
      runtime.log.error({ err }, "A2A call failed");
      status = 500;
      error = internalJsonRpcError();
    }
    return { status, error };
  };
  const reply = (res: Response, legacy: boolean, id: unknown, err: unknown, fallback?: JsonRpcError) => {
    const { status, error } = failure(res, legacy, err, fallback);
    res.status(status).json({ jsonrpc: "2.0", id: id ?? null, error });
  };

  // The HTTP+JSON binding (rest.ts): the same handler, key, limits and billing.
  router.use("/:agentId/v1", ...restBinding(runtime, handler, auth, MAX_BODY));

  router.post(
    "/:agentId",
    async (req, res, next) => {
      // The key first, before the body is read: a caller without one learns nothing else.
      const state: Partial<CallState> = {};
      try {
        state.principal = await auth(req, String(req.params.agentId));
      } catch (err) {
        reply(res, isLegacyVersion(req.get("a2a-version")), null, err);
        return;
      }
      res.locals[CALL_STATE] = state;
      next();
    },
    express.json({ limit: MAX_BODY, type: () => true }),
    async (req, res) => {
      const version = req.get("a2a-version") || "0.3";
      const legacy = isLegacyVersion(version);
      const body = req.body as { id?: unknown; method?: unknown; params?: unknown } | undefined;
      const rpcId = typeof body === "object" && body !== null && (typeof body.id === "string" || typeof body.id === "number") ? body.id : null;
      try {
        validateVersion(version, capabilities, "JSONRPC");
      } catch (err) {
        reply(res, false, rpcId, err);
        return;
      }
      const invalid = envelopeError(body);
      if (invalid) {
        reply(res, legacy, rpcId, undefined, invalid);
        return;
      }
      const state = res.locals[CALL_STATE] as CallState;
      if (!keyRecheckedLater(body, state.principal)) {
        try {
          state.principal = await auth(req, String(req.params.agentId), { fresh: true });
        } catch (err) {
          reply(res, legacy, rpcId, err);
          return;
        }
      }
      state.onRateLimit = noteRateLimit(state);
      rateLimitHeadersOnWrite(res, state);
      const left = new AbortController();
      res.on("close", () => res.writableFinished || left.abort());
      state.left = left.signal;
      const user: User = { isAuthenticated: true, userName: state.principal.keyId };
      const context = defaultServerCallContextBuilder({ extensions: undefined, user, headers: req.headers, requestedVersion: version });
      context.state.set(CALL_STATE, state);
      const transport = legacy ? legacyTransport : v1Transport;
      // A blocking send's answer may leave as soon as its task's end commits (answer-ahead.ts).
      if (!legacy && body?.method === "SendMessage") state.ahead = { res, rest: false, rpcId };
      let result: unknown;
      try {
        result = await transport.handle(req.body, context);
      } catch (err) {
        if (!res.headersSent) reply(res, legacy, rpcId, state.failure ?? err);
        return;
      }
      if (!result || typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") {
        const r = result as { id?: unknown; error?: JsonRpcError };
        if (res.headersSent) return; // answered ahead
        if (r?.error) reply(res, legacy, r.id ?? rpcId, state.failure, unexpected(r.error, state));
        else res.json(result);
        return;
      }
      await stream(res, result as AsyncIterable<unknown>, legacy, rpcId, state, failure);
    },
  );

  // The body's own faults (not JSON, too large) answered as JSON-RPC errors.
  const bodyErrors: ErrorRequestHandler = (err, req, res, next) => {
    if (req.method !== "POST" || res.headersSent) return next(err);
    const e = err as { type?: string };
    const legacy = isLegacyVersion(req.get("a2a-version"));
    if (e?.type === "entity.parse.failed") return res.status(200).json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Invalid JSON payload" } });
    if (e?.type === "entity.too.large") return reply(res, legacy, null, new AppError("payload_too_large", `The request body is larger than ${MAX_BODY}`));
    if (err instanceof AppError) return reply(res, legacy, null, err);
    // Any other refusal of the body (an unsupported encoding or charset, an aborted upload).
    const status = (err as { status?: number })?.status;
    if (typeof status === "number" && status >= 400 && status < 500) return res.status(status).json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "The request body could not be read" } });
    next(err);
  };
  router.use(bodyErrors);
  // Under its prefix: requests to other routes pass one check, and A2A's skip theirs.
  return { router, prefix: "/api/a2a" };
};

const CHAT_SENDS = new Set(["SendMessage", "SendStreamingMessage", "message/send", "message/stream"]);

/**
 * The key was checked from the cache (NOTIFY-evicted, up to 5 s old). Only a chat agent's new
 * message may go on with it: the turn's open statement re-checks that the key exists and has not
 * expired. Every other call (reads, cancels, push configs, an automation agent's job, a message
 * naming a task, refused before any turn) has no later check, so the key is looked up fresh: a
 * deleted key fails at once even while its NOTIFY is late or lost (as MCP does).
 */
function keyRecheckedLater(body: { method?: unknown; params?: unknown } | undefined, principal: KeyPrincipal): boolean {
  if (principal.automation || typeof body?.method !== "string" || !CHAT_SENDS.has(body.method)) return false;
  const message = (body.params as { message?: { taskId?: unknown } } | undefined)?.message;
  return typeof message === "object" && message !== null && !message.taskId;
}

/**
 * The SDK reports any exception as an internal error with its message. Before the handler was
 * reached it is the SDK's decoding failing on a malformed request (Invalid params); after, a bug
 * (a generic 500, nothing of it shown).
 */
function unexpected(error: JsonRpcError, state: CallState): JsonRpcError | undefined {
  if (error.code !== INTERNAL_ERROR) return error;
  if (!state.entered) return { code: INVALID_PARAMS, message: `Invalid parameters: ${error.message}`.slice(0, 300) };
  return undefined;
}

/** An SSE answer: the first event decides between an error (JSON) and a stream. */
async function stream(
  res: Response,
  events: AsyncIterable<unknown>,
  legacy: boolean,
  rpcId: unknown,
  state: CallState,
  failure: (res: Response, legacy: boolean, err: unknown, fallback?: JsonRpcError) => { status: number; error: JsonRpcError },
): Promise<void> {
  const it = events[Symbol.asyncIterator]();
  const sse = new SseResponse(res);
  const stop = () => void it.return?.(undefined);
  sse.abort.signal.addEventListener("abort", stop, { once: true });
  let first: IteratorResult<unknown>;
  try {
    first = await it.next();
  } catch (err) {
    // A stream that fails before its first event. An error JSON-RPC answers with HTTP 200 (the
    // spec's errors, Invalid params) is the stream's one event (spec §9.4.2, §9.4.6: the answer
    // to a streaming method is an SSE stream); one with an HTTP status of its own (401, 402, 429,
    // 5xx) is a JSON answer with that status, like any other failed call.
    const f = !(err instanceof AppError) && !(err instanceof A2AError) && !state.entered ? failure(res, legacy, undefined, { code: INVALID_PARAMS, message: "Invalid parameters" }) : failure(res, legacy, state.failure ?? err);
    const body = { jsonrpc: "2.0", id: rpcId ?? null, error: f.error };
    if (f.status !== 200) res.status(f.status).json(body);
    else {
      sse.open(() => formatSSEEvent(body));
      sse.end("");
    }
    return;
  }
  sse.open(() => (first.done ? "" : formatSSEEvent(first.value)), state.eventsWaitFor);
  const heartbeat = setInterval(() => sse.write(": keep-alive\n\n"), HEARTBEAT_MS);
  let last = "";
  try {
    for (let n = 1; ; n++) {
      const next = await it.next();
      if (next.done) break;
      // The end's events sent ahead of the statement that stores it wait for its commit (stream.ts),
      // and end the response once they pass.
      const held = state.endHeld;
      const gated = held && n >= held.from && n < held.to;
      sse.write(formatSSEEvent(next.value), gated ? held.until : undefined);
      if (gated && n === held.to - 1) sse.endWhen(held.until);
    }
  } catch (err) {
    const error = err instanceof AppError ? appErrorToJsonRpc(err, legacy).error : err instanceof A2AError ? (legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err) : JsonRpcTransportHandler.mapToJSONRPCError(err)) : internalJsonRpcError();
    // The end's own data: it leaves even when the held events were dropped.
    last = formatSSEEvent({ jsonrpc: "2.0", id: rpcId, error });
  } finally {
    clearInterval(heartbeat);
    sse.end(last);
  }
}
