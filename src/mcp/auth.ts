import type express from "express";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { AppError } from "../errors/app-error.js";
import type { AgentKeyAuth } from "../keys/agent-key.js";
import type { KeyPrincipal } from "../keys/auth.js";
import { mcpPath } from "../agents/protocol-urls.js";
import { bearerChallenge } from "../http/auth.js";

/**
 * Who may call an agent's MCP server: a key of that very agent (`Authorization: Bearer a2a_…`; the
 * chat API's `X-API-Key` works too), checked by the shared per-agent key check. A missing, wrong,
 * deleted or expired key, or a key of another agent, is a 401 with an RFC 6750 challenge that
 * points at the protected-resource metadata (RFC 9728), as the MCP authorization specification
 * asks of an HTTP server (docs/design/mcp.md); its message (which key problem) is the challenge's
 * error_description and, as a JSON-RPC error, the body (routes.ts).
 */

export const resourceMetadataPath = (agentId: string) => `/.well-known/oauth-protected-resource${mcpPath(agentId)}`;

/** The challenge; `refused` is the reason when a credential was sent (RFC 6750 §3.1: none without one). */
export function challenge(publicBaseUrl: string, agentId: string, refused?: string): string {
  return bearerChallenge({ realm: "agent-gateway", resource_metadata: publicBaseUrl + resourceMetadataPath(agentId) }, refused);
}

/**
 * The shared key check, its 401 carrying the challenge. `fresh` unless a later statement
 * re-checks the key (a chat turn's open does; `run`, `get_job`, `tools/list` have none): a deleted
 * key must fail on the very next request while its NOTIFY may still be in flight.
 */
export async function authenticateForAgent(auth: AgentKeyAuth, req: express.Request, agentId: string, publicBaseUrl: string, options: { fresh: boolean }): Promise<KeyPrincipal> {
  try {
    return await auth(req, agentId, options);
  } catch (err) {
    if (err instanceof AppError && err.status === 401) {
      const sent = !!(req.get("authorization") || req.get("x-api-key"));
      throw new AppError(err.code, err.message, { headers: { ...err.headers, "WWW-Authenticate": challenge(publicBaseUrl, agentId, sent ? err.message : undefined) } });
    }
    throw err;
  }
}

/**
 * The caller travels with each request as the SDK's `authInfo` (the Node transport reads it from
 * `req.auth`), so one server serves requests of many keys in turn (server.ts). Nothing else is
 * kept in it: the key itself never is.
 */
export function attachCaller(req: express.Request, principal: KeyPrincipal): void {
  (req as express.Request & { auth?: AuthInfo }).auth = callerInfo(principal);
}

export const callerInfo = (principal: KeyPrincipal): AuthInfo => ({ token: "", clientId: principal.keyId, scopes: [], extra: { principal } });

/** The key principal of the request a tool runs for. */
export function callerOf(extra: { authInfo?: AuthInfo }): KeyPrincipal {
  const principal = extra.authInfo?.extra?.principal as KeyPrincipal | undefined;
  if (!principal) throw new Error("MCP tool call without its caller");
  return principal;
}
