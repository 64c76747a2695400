/**
 * Where an agent answers the agent protocols, one home for the paths: A2A at `/api/a2a/<id>`
 * (its card under `.well-known/`), MCP at `/api/mcp/<id>`. URLs are built on PUBLIC_BASE_URL, as
 * trigger webhook URLs are, so clients call what the console shows. No decorators here: REST
 * modules import it without loading type-graphql (its resolver is protocol-urls-resolver.ts).
 */
export const a2aPath = (agentId: string) => `/api/a2a/${encodeURIComponent(agentId)}`;
export const a2aCardPath = (agentId: string) => `${a2aPath(agentId)}/.well-known/agent-card.json`;
export const mcpPath = (agentId: string) => `/api/mcp/${encodeURIComponent(agentId)}`;
