import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.js";
import { a2aCardPath, mcpPath } from "./protocol-urls.js";
import { AgentType } from "./types.js";

/** Agent.a2aCardUrl and Agent.mcpUrl: the protocol paths on PUBLIC_BASE_URL. */
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
