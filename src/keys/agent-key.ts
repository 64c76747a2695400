import type { Request } from "express";
import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";
import { KeyAuthenticator, type KeyPrincipal } from "./auth.js";
import { keyOfAnotherAgent } from "./refusal.js";

/**
 * Key authentication for the per-agent protocol endpoints (A2A, MCP): `Authorization: Bearer` or
 * `X-API-Key`, and the key must belong to the agent of the URL. A live key of another agent is
 * refused with a 401 saying just that: its holder owns the key, and learns neither which agent it
 * is for nor whether the agent of the URL exists (the answer is the same either way). OAuth access
 * tokens (docs/design/oauth.md) are accepted here too: each resolves to its consent's key of kind OAUTH.
 */
export type AgentKeyAuth = (req: Request, agentId: string, options?: { fresh?: boolean }) => Promise<KeyPrincipal>;

const authenticatorOf = perRuntime((runtime) => new KeyAuthenticator(runtime));

export function agentKeyAuth(runtime: Runtime): AgentKeyAuth {
  const authenticator = authenticatorOf(runtime);
  return async (req, agentId, options = {}) => {
    const principal = await authenticator.authenticate(req.get("authorization"), req.get("x-api-key"), { ...options, oauth: true });
    if (principal.agent.id !== agentId) throw keyOfAnotherAgent();
    return principal;
  };
}
