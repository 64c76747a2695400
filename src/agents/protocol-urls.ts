import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.js";
import { AgentType } from "./types.js";

/**
 * Where an agent answers the agent protocols, one home for the paths: A2A at `/api/a2a/<id>`
 * (its card under `.well-known/`), MCP at `/api/mcp/<id>`. URLs are built on PUBLIC_BASE_URL, as
 * trigger webhook URLs are, so clients call what the console shows.
 */
export const a2aPath = (agentId: string) => `/api/a2a/${encodeURIComponent(agentId)}`;
export const a2aCardPath = (agentId: string) => `${a2aPath(agentId)}/.well-known/agent-card.json`;
export const mcpPath = (agentId: string) => `/api/mcp/${encodeURIComponent(agentId)}`;

@Resolver(() => AgentType)
export class AgentProtocolUrlsResolver {
  @FieldResolver(() => String, { description: "The agent's A2A agent card (public); its key goes in Authorization: Bearer" })
  a2aCardUrl(@Root() agent: AgentType, @Ctx() ctx: GraphQLContext): string {
    return ctx.runtime.config.publicBaseUrl + a2aCardPath(agent.id);
  }

  @FieldResolver(() => String, { description: "The agent's MCP server (Streamable HTTP); its key goes in Authorization: Bearer" })
  mcpUrl(@Root() agent: AgentType, @Ctx() ctx: GraphQLContext): string {
    return ctx.runtime.config.publicBaseUrl + mcpPath(agent.id);
  }
}
