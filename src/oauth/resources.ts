import { a2aPath, mcpPath } from "../agents/protocol-urls.js";

/**
 * The protected resources (RFC 9728) of the authorization server: every agent's MCP endpoint and
 * A2A base. A token is for one agent: the resource it was asked for names it, and the consent
 * binds the grant (and its key) to that agent.
 */

/** The one scope a token carries: the agent's protocols, as its key allows. */
export const OAUTH_SCOPE = "agent";

const RESOURCE = /^\/api\/(mcp|a2a)\/([A-Za-z0-9_-]{1,100})$/;

/** The agent id a resource URL names, or undefined when it is no agent's MCP or A2A URL. */
export function agentOfResource(publicBaseUrl: string, resource: string): string | undefined {
  if (typeof resource !== "string" || !resource.startsWith(publicBaseUrl + "/")) return undefined;
  const m = RESOURCE.exec(resource.slice(publicBaseUrl.length));
  return m?.[2];
}

export const protectedResourcePath = (resourcePath: string) => `/.well-known/oauth-protected-resource${resourcePath}`;
export const mcpResourceMetadataPath = (agentId: string) => protectedResourcePath(mcpPath(agentId));
export const a2aResourceMetadataPath = (agentId: string) => protectedResourcePath(a2aPath(agentId));

/** RFC 9728 metadata of a resource at `resourcePath` (an agent's MCP or A2A path). */
export function protectedResourceMetadata(publicBaseUrl: string, resourcePath: string, name: string) {
  return {
    resource: publicBaseUrl + resourcePath,
    authorization_servers: [publicBaseUrl],
    bearer_methods_supported: ["header"],
    scopes_supported: [OAUTH_SCOPE],
    resource_name: name,
  };
}
