import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { defaultServerCallContextBuilder, type A2ARequestHandler } from "@a2a-js/sdk/server";
import { restHandler, type UserBuilder } from "@a2a-js/sdk/server/express";
import { A2AError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { sseData } from "../chat/sse.js";
import { bearerChallenge, reasonPhrase } from "../http/auth.js";
import type { AgentKeyAuth } from "../keys/agent-key.js";
import type { Runtime } from "../runtime/runtime.js";
import { appErrorToJsonRpc, internalJsonRpcError, INTERNAL_ERROR, INVALID_PARAMS } from "./errors.js";
import { CALL_STATE, isLegacyVersion, type CallState } from "./call.js";
import { noteRateLimit, rateLimitHeadersOnWrite } from "./rate-limit-headers.js";
import { coalesceWrites } from "./coalesced-writes.js";
import { withHeldStreams, type HeldStreamState, type StreamErrorEvent } from "./held-stream.js";

/**
 * The HTTP+JSON binding at `<base>/v1` (spec §11), v1.0 and, by the `A2A-Version` header (absent
 * or 0.3), v0.3's paths (`<base>/v1/v1/message:send`, as a v0.3 client joins them to the card's
 * `<base>/v1`). The SDK's express router parses and serializes both versions; the gateway adds
 * what its JSON-RPC route does: the key before anything, a fresh key check for every call but a
 * chat agent's new message (routes.ts `keyRecheckedLater`), rate-limit headers, and its own
 * errors as google.rpc.Status bodies with the error's HTTP status (the SDK would answer 500 with
 * the exception's message).
 */

const HEARTBEAT_MS = 15_000;
const STATUS_NAME: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  402: "FAILED_PRECONDITION",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  415: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** A REST call's state: `answered` once its error answer is being written (ownErrorsJson); a stream's (held-stream.ts). */
type RestCallState = HeldStreamState & { answered?: boolean };

const CHAT_SEND = /\/message:(send|stream)$/;
/** SendMessage (v1.0's path; v0.3's, as its client joins it, ends the same: the version decides). */
const SEND = /\/message:send$/;
/** The methods answered with an SSE stream. */
const STREAMS = /(\/message:stream|:subscribe)$/;

/** The state the route keeps for a call, found again from the request (UserBuilder gets only it). */
const stateOf = (req: Request) => req.res!.locals[CALL_STATE] as CallState;

/** A gateway error as v1.0's google.rpc.Status body, with its ErrorInfo as JSON-RPC v1.0 gives it. */
function restErrorBody(err: AppError) {
  const details = appErrorToJsonRpc(err, false).error.data;
  return { error: { code: err.status, status: STATUS_NAME[err.status] ?? "UNKNOWN", message: err.message, details } };
}
const INTERNAL_BODY = { error: { code: 500, status: "INTERNAL", message: "Internal error", details: [] } };

export function restError(res: Response, err: AppError): void {
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  if (err.status === 401) {
    const sent = !!(res.req.get("authorization") || res.req.get("x-api-key"));
    res.setHeader("WWW-Authenticate", bearerChallenge({ realm: "a2a" }, sent ? err.message : undefined));
    res.statusMessage = reasonPhrase("Unauthorized", err.message);
  }
  res.status(err.status).json(restErrorBody(err));
}

/**
 * The error event that ends a stream which failed after its first event (held-stream.ts), framed
 * as the SDK frames one (`event: error`) but with the body the call would have had before it: a
 * gateway error with its own status and ErrorInfo (the SDK would call it a 500 and print it, its
 * cause and stack to stderr), anything else but an A2A error as a bare internal error, logged
 * without its details. An A2A error is the SDK's to frame (undefined).
 */
function streamErrorEvent(runtime: Runtime): StreamErrorEvent {
  return (context, err) => {
    if (err instanceof A2AError) return undefined;
    const legacy = isLegacyVersion(context.requestedVersion);
    if (!(err instanceof AppError)) runtime.log.error({ message: err instanceof Error ? err.message : String(err) }, "A2A REST stream failed");
    const body = err instanceof AppError ? (legacy ? appErrorToJsonRpc(err, true).error : restErrorBody(err)) : legacy ? internalJsonRpcError() : INTERNAL_BODY;
    return sseData(body, "error");
  };
}

/**
 * The SDK answers a failed call itself (`res.status(s).json(google.rpc.Status)`): a gateway error
 * noted on the call state is answered as such instead, and an exception that is not an A2A error
 * (a bug) shows nothing of itself, or, before the handler was reached, is the SDK failing to
 * decode the request (400, as JSON-RPC's Invalid params).
 *
 * One function for every call, installed as the response's `json`: it finds the call through
 * `this`. A function literal written into `res.json` by the call would live in the old generation
 * and keep the response, the request and its body through young collections (6 kB promoted a
 * call; rate-limit-headers.ts says why).
 */
function ownErrorsJson(runtime: Runtime): (this: Response, body: unknown) => Response {
  const json = express.response.json as (this: Response, body: unknown) => Response;
  return function (this: Response, body: unknown): Response {
    const res = this;
    // Answered ahead (answer-ahead.ts): the SDK's own answer for the same task comes after.
    if (res.headersSent && res.writableEnded) return res;
    const state = res.locals[CALL_STATE] as RestCallState;
    if (state.answered || res.headersSent || res.statusCode < 400) return json.call(res, body);
    state.answered = true;
    // v0.3's router (A2A-Version absent or 0.3) answers errors as `{ code, message, data }`.
    const legacy = isLegacyVersion(res.req.get("a2a-version"));
    if (state.failure) {
      if (!legacy) restError(res, state.failure);
      else {
        for (const [k, v] of Object.entries(state.failure.headers)) res.setHeader(k, v);
        res.status(state.failure.status);
        json.call(res, appErrorToJsonRpc(state.failure, true).error);
      }
      return res;
    }
    const b = body as { error?: { message?: string; details?: unknown[] }; code?: number; message?: string } | undefined;
    // An A2A error the SDK mapped carries its ErrorInfo (v1.0) or its own code (v0.3): as is.
    if (res.statusCode < 500 || b?.error?.details?.length || (legacy && b?.code !== INTERNAL_ERROR)) return json.call(res, body);
    const message = b?.error?.message ?? b?.message ?? "";
    if (!state.entered) {
      res.status(400);
      return json.call(res, legacy ? { code: INVALID_PARAMS, message: `Invalid parameters: ${message}`.slice(0, 300) } : { error: { code: 400, status: "INVALID_ARGUMENT", message: `Invalid parameters: ${message}`.slice(0, 300), details: [] } });
    }
    runtime.log.error({ message }, "A2A REST call failed");
    return json.call(res, legacy ? internalJsonRpcError() : INTERNAL_BODY);
  };
}

export function restBinding(runtime: Runtime, handler: A2ARequestHandler, auth: AgentKeyAuth, maxBody: string): (RequestHandler | ErrorRequestHandler)[] {
  // The JSON-RPC route's body limit (the SDK's parser, which then skips a parsed body, takes 100 kB).
  const body = express.json({ limit: maxBody, strict: false, type: ["application/json", "application/a2a+json"] });
  const bodyErrors: ErrorRequestHandler = (err, _req, res, next) => {
    const type = (err as { type?: string })?.type;
    if (type === "entity.too.large") return restError(res, new AppError("payload_too_large", `The request body is larger than ${maxBody}`));
    if (type === "entity.parse.failed") return res.status(400).json({ error: { code: 400, status: "INVALID_ARGUMENT", message: "Invalid JSON payload", details: [] } });
    next(err);
  };
  const answerJson = ownErrorsJson(runtime);
  const authenticate: RequestHandler = async (req, res, next) => {
    // The key first, before the body is read: a caller without one learns nothing else.
    let principal;
    try {
      principal = await auth(req, String(req.params.agentId));
    } catch (err) {
      if (err instanceof AppError) return restError(res, err);
      return next(err);
    }
    const left = new AbortController();
    res.on("close", () => res.writableFinished || left.abort());
    const state = { principal, left: left.signal } as RestCallState;
    state.onRateLimit = noteRateLimit(state);
    rateLimitHeadersOnWrite(res, state);
    res.locals[CALL_STATE] = state;
    res.json = answerJson;
    // A v1.0 blocking send's answer may leave as soon as its task's end commits (answer-ahead.ts).
    if (req.method === "POST" && SEND.test(req.path) && req.get("a2a-version")?.trim() === "1.0") state.ahead = { res, rest: true };
    if (STREAMS.test(req.path)) {
      state.writes = coalesceWrites(res);
      keepAlive(res, state);
    }
    next();
  };

  // After the body is parsed: the fresh key check where no later statement re-checks the key.
  const userBuilder: UserBuilder = async (req) => {
    const state = stateOf(req);
    const body = req.body as { message?: { taskId?: unknown } } | undefined;
    const chatSend = !state.principal.automation && req.method === "POST" && CHAT_SEND.test(req.path) && !body?.message?.taskId;
    if (!chatSend) {
      try {
        state.principal = await auth(req, String(req.params.agentId ?? state.principal.agent.id), { fresh: true });
      } catch (err) {
        if (err instanceof AppError) state.failure = err;
        throw err;
      }
    }
    // The call state rides on the user into the context the SDK builds (contextBuilder below).
    return { isAuthenticated: true, userName: state.principal.keyId, [CALL_STATE]: state };
  };

  const requestHandler = withHeldStreams(handler, streamErrorEvent(runtime));
  const sdkRouter = (legacyCompat: boolean) =>
    restHandler({
      requestHandler,
      userBuilder,
      legacyCompat: { enabled: legacyCompat },
      contextBuilder: (args) => {
        const context = defaultServerCallContextBuilder(args);
        context.state.set(CALL_STATE, (args.user as { [CALL_STATE]?: CallState })[CALL_STATE]);
        return context;
      },
    });
  // A v1.0 call goes straight to the v1.0 routes: the SDK's v0.3 router in front of them would
  // only pass it on, after one more router's dispatch. Every other version (absent, 0.3, one the
  // SDK refuses) goes through both, as the SDK serves them.
  const v1Only = sdkRouter(false);
  const withLegacy = sdkRouter(true);
  const byVersion: RequestHandler = (req, res, next) => (req.get("a2a-version")?.trim() === "1.0" ? v1Only : withLegacy)(req, res, next);
  return [authenticate, body, bodyErrors, byVersion];
}

/**
 * A quiet stream gets an SSE comment every 15 s while its events flow (`streaming`, set by
 * HeldStream once the first event left). The timer is cleared by the response's close,
 * and no function is written into the call state (rate-limit-headers.ts says why).
 */
function keepAlive(res: Response, state: RestCallState): void {
  const timer = setInterval(() => state.streaming && res.headersSent && !res.writableEnded && res.write(": keep-alive\n\n"), HEARTBEAT_MS);
  res.on("close", () => clearInterval(timer));
}
