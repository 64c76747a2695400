import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root } from "type-graphql";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { AgentType } from "./types.js";
import { deleteAgentSecret, secretNames, setAgentSecret } from "./secrets.js";
import { requireAgent, setAgentEgress, updateAgent } from "./service.js";

/** What an automation agent may reach and hold: egress allowlist, secrets, its script as a file. */
@Resolver(() => AgentType)
export class AgentAutomationResolver {
  @FieldResolver(() => [String], { description: "Names of the agent's secrets (ctx.secrets.NAME); values are never returned" })
  async secretNames(@Root() agent: AgentType, @Ctx() ctx: GraphQLContext): Promise<string[]> {
    return secretNames(ctx.em, agent.id);
  }

  @Mutation(() => AgentType, { description: "Replaces the hosts ctx.fetch may reach: api.example.com or *.example.com (HTTPS only)" })
  async setAgentEgress(@Arg("agentId", () => ID) agentId: string, @Arg("allow", () => [String]) allow: string[], @Ctx() ctx: GraphQLContext): Promise<AgentType> {
    return AgentType.from(await setAgentEgress(ctx.em, accountOf(ctx), agentId, allow));
  }

  @Mutation(() => [String], { description: "Sets ctx.secrets.NAME (stored encrypted); returns the agent's secret names" })
  async setAgentSecret(
    @Arg("agentId", () => ID) agentId: string,
    @Arg("name", () => String) name: string,
    @Arg("value", () => String) value: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string[]> {
    return setAgentSecret(ctx.em, ctx.runtime.config.secretEncryptionKey, accountOf(ctx), agentId, name, value);
  }

  @Mutation(() => Boolean)
  async deleteAgentSecret(@Arg("agentId", () => ID) agentId: string, @Arg("name", () => String) name: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    if (!(await deleteAgentSecret(ctx.em, accountOf(ctx), agentId, name))) throw new AppError("not_found", `Secret ${name} not found`);
    return true;
  }

  @Mutation(() => AgentType, {
    description: "Replaces the agent's script with a module file's text (SCRIPT_MAX_BYTES); errors name line and column",
  })
  async importAgentScript(@Arg("agentId", () => ID) agentId: string, @Arg("source", () => String) source: string, @Ctx() ctx: GraphQLContext): Promise<AgentType> {
    await requireAgent(ctx.em, accountOf(ctx), agentId);
    if (!source.trim()) throw new AppError("validation_failed", "script: the file is empty", { param: "source" });
    return AgentType.from(await updateAgent(ctx.em, accountOf(ctx), agentId, { script: source }, ctx.runtime.validateScript));
  }
}
