import type express from "express";
import { classifyInboundRequest, createMcpHandler, PROTOCOL_VERSION_META_KEY, type AuthInfo, type McpHttpHandler } from "@modelcontextprotocol/server";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { callerInfo } from "./auth.js";
import { modernAgentServer } from "./modern-server.js";
import type { McpBody } from "./request-body.js";
import type { AgentProfile } from "./server.js";

/**
 * The 2026-07-28 era over HTTP: the SDK v2's own entry (`createMcpHandler`, modern-only: the
 * initialize era stays on the route's other path, routes.ts) behind the route's key check. The
 * route reads the body once; the SDK's classifier (the very code its entry routes with) says
 * which era a POST belongs to, and the entry gets the parsed body, so nothing is read twice.
 */

const header = (req: express.Request, name: string) => req.get(name) ?? undefined;

/** The first revision of the per-request era; the SDK compares revisions as strings too. */
const FIRST_MODERN = "2026-07-28";

/**
 * The SDK's rule for the common initialize-era message, without its classifier's cost (a few
 * hundredths of a millisecond on every initialize-era chat call): one JSON-RPC message with no
 * envelope claim (`_meta`'s protocol-version key) and no modern MCP-Protocol-Version header is
 * initialize-era traffic, whatever its method. Anything else goes to the classifier itself.
 */
function plainlyLegacy(message: unknown, version: string | undefined): boolean {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  if (version !== undefined && version.trim() >= FIRST_MODERN) return false;
  const params = (message as { params?: unknown }).params;
  if (params === undefined) return true;
  if (typeof params !== "object" || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  return meta === undefined || (typeof meta === "object" && meta !== null && !(PROTOCOL_VERSION_META_KEY in meta));
}

/**
 * The SDK's rule for the common 2026-07-28 message, without running its classifier twice (here and
 * in its entry, a tenth of that era's own CPU per call in a profile): one JSON-RPC request or
 * notification, other than `initialize`, whose `_meta` makes an envelope claim is never
 * initialize-era traffic — the classifier serves it on the 2026-07-28 path or refuses it there.
 */
function plainlyModern(message: unknown): boolean {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const m = message as { method?: unknown; params?: unknown };
  if (typeof m.method !== "string" || m.method === "initialize" || "result" in m || "error" in m) return false;
  const meta = typeof m.params === "object" && m.params !== null ? (m.params as { _meta?: unknown })._meta : undefined;
  return typeof meta === "object" && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/** The MCP headers the era of a POST depends on. */
export interface EraHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

/** Whether the SDK v2 would serve a POSTed message on its 2026-07-28 path (its envelope claim, or a modern header; its refusals of those too). */
export function isModernMessage(message: unknown, headers: EraHeaders): boolean {
  if (plainlyLegacy(message, headers.protocolVersion)) return false;
  if (plainlyModern(message)) return true;
  const outcome = classifyInboundRequest({
    httpMethod: "POST",
    body: message,
    protocolVersionHeader: headers.protocolVersion,
    mcpMethodHeader: headers.method,
    mcpNameHeader: headers.name,
  });
  return outcome.kind !== "legacy";
}

export function isModernRequest(req: express.Request, body: McpBody): boolean {
  if (body.parsed === undefined) return false; // 413 and -32700 stay with the initialize era's transport, as before
  return isModernMessage(body.parsed, { protocolVersion: header(req, "mcp-protocol-version"), method: header(req, "mcp-method"), name: header(req, "mcp-name") });
}

/** The profile rides with the caller to the factory, which builds the request's server. */
interface ModernCaller {
  principal: KeyPrincipal;
  profile: AgentProfile;
}

const handlers = new WeakMap<Runtime, McpHttpHandler>();

function handlerOf(runtime: Runtime, maxBytes: number): McpHttpHandler {
  let handler = handlers.get(runtime);
  if (!handler) {
    handler = createMcpHandler(
      (ctx) => {
        const caller = ctx.authInfo?.extra as ModernCaller | undefined;
        if (!caller) throw new Error("MCP request without its caller");
        return modernAgentServer(runtime, caller.profile);
      },
      { legacy: "reject", maxRequestBodySize: maxBytes, onerror: (err) => runtime.log.debug({ err: String(err) }, "MCP (2026-07-28) request refused or failed") },
    );
    handlers.set(runtime, handler);
  }
  return handler;
}

// Hop-by-hop and framing headers describe the Node request, not the web Request built from it.
const SKIPPED = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade"]);

/** Serves one 2026-07-28 POST; the client leaving aborts its handler (a chat turn as a dropped stream, a run's wait). */
export async function serveModern(
  runtime: Runtime,
  req: express.Request,
  res: express.Response,
  post: { body: McpBody; principal: KeyPrincipal; profile: AgentProfile; url: URL; maxBytes: number },
): Promise<void> {
  const left = new AbortController();
  res.on("close", () => res.writableFinished || left.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !SKIPPED.has(name)) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const request = new Request(post.url, { method: "POST", headers, signal: left.signal });
  const caller: ModernCaller = { principal: post.principal, profile: post.profile };
  const authInfo: AuthInfo = { ...callerInfo(post.principal), extra: { ...caller } };
  const response = await handlerOf(runtime, post.maxBytes).fetch(request, { authInfo, parsedBody: post.body.parsed });
  if (res.destroyed) return void response.body?.cancel().catch(() => {});
  res.status(response.status);
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) return void res.end();
  // JSON or an SSE stream (progress notifications first): written as it comes.
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done || res.destroyed) break;
    res.write(value);
  }
  res.end();
}
