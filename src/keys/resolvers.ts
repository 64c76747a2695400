import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Resolver, Root } from "type-graphql";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { AgentType } from "../agents/types.js";
import { ApiKeyType, CreatedApiKeyType, SpendLimitPeriod } from "./types.js";
import { createApiKey, deleteApiKey, listApiKeys, setAccountRateLimit, updateApiKey } from "./service.js";

@Resolver(() => ApiKeyType)
export class ApiKeyResolver {
  @Mutation(() => CreatedApiKeyType)
  async createApiKey(
    @Arg("agentId", () => ID) agentId: string,
    @Arg("name", () => String) name: string,
    @Arg("rateLimitPerMinute", () => Int, { nullable: true, description: "Requests per minute; default: the account's default" }) rateLimitPerMinute: number | null,
    @Arg("expiresAt", () => Date, { nullable: true, description: "When the key stops working (future); default: never" }) expiresAt: Date | null | undefined,
    @Arg("spendLimit", () => String, { nullable: true, description: 'USD the key may spend per period, e.g. "5"; default: no limit' }) spendLimit: string | null | undefined,
    @Arg("spendLimitPeriod", () => SpendLimitPeriod, { nullable: true, description: "Default MONTH (UTC)" }) spendLimitPeriod: SpendLimitPeriod | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CreatedApiKeyType> {
    const { key, apiKey } = await createApiKey(ctx.runtime.pool, accountOf(ctx), agentId, name, { rateLimitPerMinute, expiresAt, spendLimit, spendLimitPeriod });
    return Object.assign(new CreatedApiKeyType(), { key, apiKey: ApiKeyType.from(apiKey) });
  }

  @Mutation(() => Boolean, { description: "Revokes the key at once, on every API instance" })
  async deleteApiKey(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    if (!(await deleteApiKey(ctx.runtime, accountOf(ctx), id))) throw new AppError("not_found", `API key ${id} not found`);
    return true;
  }

  @Mutation(() => ApiKeyType, { description: "Changes the given controls (omitted ones stay; null clears), on every API instance at once" })
  async updateApiKey(
    @Arg("id", () => ID) id: string,
    @Arg("rateLimitPerMinute", () => Int, { nullable: true }) rateLimitPerMinute: number | null | undefined,
    @Arg("expiresAt", () => Date, { nullable: true }) expiresAt: Date | null | undefined,
    @Arg("spendLimit", () => String, { nullable: true }) spendLimit: string | null | undefined,
    @Arg("spendLimitPeriod", () => SpendLimitPeriod, { nullable: true }) spendLimitPeriod: SpendLimitPeriod | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ApiKeyType> {
    return ApiKeyType.from(await updateApiKey(ctx.runtime, accountOf(ctx), id, { rateLimitPerMinute, expiresAt, spendLimit, spendLimitPeriod }));
  }

  @Mutation(() => Boolean, { description: "Default requests per minute for keys without their own limit (null: installation default)" })
  async setDefaultRateLimit(@Arg("rateLimitPerMinute", () => Int, { nullable: true }) rateLimitPerMinute: number | null, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await setAccountRateLimit(ctx.runtime, accountOf(ctx), rateLimitPerMinute);
    return true;
  }
}

@Resolver(() => AgentType)
export class AgentApiKeysResolver {
  @FieldResolver(() => [ApiKeyType])
  async apiKeys(@Root() agent: AgentType, @Ctx() ctx: GraphQLContext): Promise<ApiKeyType[]> {
    return (await listApiKeys(ctx.runtime.pool, accountOf(ctx), agent.id)).map(ApiKeyType.from);
  }
}
