import express, { type ErrorRequestHandler } from "express";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { AppError } from "../errors/app-error.js";
import { agentKeyAuth } from "../keys/agent-key.js";
import type { RouteModule } from "../http/server.js";
import { attachCaller, authenticateForAgent, callerInfo, challenge } from "./auth.js";
import { chatAgentTransport, leaseAgentMcpServer } from "./server.js";
import { answerInvalidParams } from "./invalid-params.js";
import { agentName } from "./agent-names.js";
import { isChatCall, readMcpBody, type McpBody } from "./request-body.js";
import { isModernRequest, serveModern } from "./modern-http.js";

/** Request bodies above this are refused by the transport with 413 (as the chat API's 4 MB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * `{PUBLIC_BASE_URL}/api/mcp/<agent_id>`: every agent is an MCP server over Streamable HTTP,
 * stateless (no session to route), in both eras: 2026-07-28 on the SDK v2 (modern-http.ts), the
 * initialize era on the SDK v1 (a chat agent's JSON-response transport, an automation agent's
 * per-POST SDK transport with a server from a pool). The protected-resource metadata its 401
 * challenge points at is served by the authorization server (src/oauth/routes.ts).
 */
export const mcpRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  const auth = agentKeyAuth(runtime);

  router.all("/api/mcp/:agentId", async (req, res) => {
    const { agentId } = req.params;
    const base = runtime.config.publicBaseUrl;
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    if (req.method !== "POST") {
      await authenticateForAgent(auth, req, agentId, base, { fresh: true });
      throw new AppError("method_not_allowed", "This MCP server answers POST only (stateless Streamable HTTP)", { headers: { Allow: "POST" } });
    }
    // The key first, from the headers alone (as A2A): a caller without a valid one gets its 401
    // before a byte of the body is read or parsed. The cached key is enough only for a chat agent's
    // `chat` call: its turn's open statement re-checks that the key exists and has not expired, so
    // a deleted key still fails on the very next call (as a tool error). Everything else
    // (initialize, tools/list, an automation agent's run and get_job) has no later check of the key
    // and looks it up fresh once the body says what is asked.
    const cached = await authenticateForAgent(auth, req, agentId, base, { fresh: false });
    const body: McpBody = await readMcpBody(req, MAX_BODY_BYTES);
    const principal = isChatCall(body.parsed) && !cached.automation ? cached : await authenticateForAgent(auth, req, agentId, base, { fresh: true });
    const name = await agentName(runtime, principal.agent.accountId, agentId);
    if (name === undefined) throw new AppError("invalid_api_key", "Invalid API key", { headers: { "WWW-Authenticate": challenge(base, agentId, "Invalid API key") } });
    // 2026-07-28 (the per-request envelope): the SDK v2's entry, for both kinds of agent.
    if (isModernRequest(req, body)) {
      const profile = { name, automation: principal.automation };
      return serveModern(runtime, req, res, { body, principal, profile, url: new URL(req.originalUrl, base), maxBytes: MAX_BODY_BYTES });
    }
    // The initialize era (2025-11-25 and before), on the SDK v1 as before:
    // `automation` comes with the key lookup (a cached one is at most seconds old, keys/auth.ts).
    // A chat agent's tools send no notifications: its answers are one JSON body (Streamable HTTP
    // allows either; both official clients read it), from its server's long-lived transport.
    if (!principal.automation) {
      const json = await chatAgentTransport(runtime, name);
      const left = new AbortController();
      // Only a client that left before the answer cancels (an abort builds an error with a stack).
      res.on("close", () => res.writableFinished || left.abort());
      const post = { headers: req.headers, url: new URL(req.originalUrl, base), body, maxBytes: MAX_BODY_BYTES };
      const answer = await json.handle(post, { authInfo: callerInfo(principal) }, left.signal);
      if (!answer || res.destroyed) return;
      res.status(answer.status);
      if (answer.body === undefined) res.end();
      else res.type("application/json").end(JSON.stringify(answer.body));
      return;
    }
    // An automation agent's `run` streams its progress notifications as SSE: the SDK's transport,
    // a fresh one per request (stateless), its server from the pool.
    const { server, release } = leaseAgentMcpServer(runtime, { name, automation: true });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, maxRequestBodySize: MAX_BODY_BYTES });
    // The client went away (or the answer is complete): abort the tool calls in flight, free both.
    res.on("close", release);
    try {
      await server.connect(transport);
    } catch (err) {
      release();
      throw err;
    }
    answerInvalidParams(transport);
    attachCaller(req, principal);
    await transport.handleRequest(req, res, body.parsed);
  });

  // A refused key as a JSON-RPC error body (its message says what is wrong with the key) beside
  // the challenge: an MCP client that reads a non-2xx JSON-RPC error (the Python `mcp` SDK)
  // raises with that message, where the gateway's usual error body would read as a generic failure.
  const refusedKey: ErrorRequestHandler = (err, req, res, next) => {
    if (!(err instanceof AppError) || err.status !== 401 || res.headersSent) return next(err);
    for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
    res.status(401).json({ jsonrpc: "2.0", id: null, error: { code: UNAUTHORIZED, message: err.message, data: { code: err.code, status: 401 } } });
  };
  router.use("/api/mcp/:agentId", refusedKey);

  return router;
};

/** JSON-RPC's implementation-defined server error range; -32001 is the refused credential. */
const UNAUTHORIZED = -32001;
