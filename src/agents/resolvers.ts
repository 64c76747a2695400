import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { AgentType, CreateAgentInput, UpdateAgentInput } from "./types.js";
import { createAgent, deleteAgent, findAgent, listAgents, updateAgent } from "./service.js";
import { deleteAgentClocks } from "../schedules/service.js";

@Resolver(() => AgentType)
export class AgentResolver {
  @Query(() => [AgentType])
  async agents(@Ctx() ctx: GraphQLContext): Promise<AgentType[]> {
    return (await listAgents(ctx.em, accountOf(ctx))).map(AgentType.from);
  }

  @Query(() => AgentType, { nullable: true })
  async agent(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<AgentType | null> {
    const agent = await findAgent(ctx.em, accountOf(ctx), id);
    return agent ? AgentType.from(agent) : null;
  }

  @Mutation(() => AgentType)
  async createAgent(@Arg("input", () => CreateAgentInput) input: CreateAgentInput, @Ctx() ctx: GraphQLContext): Promise<AgentType> {
    return AgentType.from(await createAgent(ctx.em, accountOf(ctx), input, ctx.runtime.validateScript));
  }

  @Mutation(() => AgentType)
  async updateAgent(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => UpdateAgentInput) input: UpdateAgentInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AgentType> {
    if (input.name === null) throw new AppError("validation_failed", "name cannot be null", { param: "name" });
    return AgentType.from(await updateAgent(ctx.em, accountOf(ctx), id, input, ctx.runtime.validateScript));
  }

  @Mutation(() => Boolean, { description: "Deletes the agent with its keys, threads, triggers and schedules (their Temporal Schedules too)" })
  async deleteAgent(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    // The clocks first: once the rows are gone (cascade) nothing would know their ids.
    await deleteAgentClocks(ctx.runtime, ctx.em, accountOf(ctx), id);
    const deleted = await deleteAgent(ctx.em, accountOf(ctx), id);
    if (!deleted) throw new AppError("not_found", `Agent ${id} not found`);
    return true;
  }
}
