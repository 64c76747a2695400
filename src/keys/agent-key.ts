import type { Request } from "express";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";
import { KeyAuthenticator, type KeyPrincipal } from "./auth.js";

/**
 * Key authentication for the per-agent protocol endpoints (A2A, MCP): `Authorization: Bearer` or
 * `X-API-Key`, and the key must belong to the agent of the URL. A key of another agent is refused
 * exactly like a wrong key (401 invalid_api_key), so a caller learns nothing about other agents.
 */
export type AgentKeyAuth = (req: Request, agentId: string, options?: { fresh?: boolean }) => Promise<KeyPrincipal>;

const byRuntime = new WeakMap<Runtime, KeyAuthenticator>();

export function agentKeyAuth(runtime: Runtime): AgentKeyAuth {
  let keys = byRuntime.get(runtime);
  if (!keys) {
    keys = new KeyAuthenticator(runtime);
    byRuntime.set(runtime, keys);
  }
  const authenticator = keys;
  return async (req, agentId, options = {}) => {
    const principal = await authenticator.authenticate(req.get("authorization"), req.get("x-api-key"), options);
    if (principal.agent.id !== agentId) throw new AppError("invalid_api_key", "Invalid API key");
    return principal;
  };
}
