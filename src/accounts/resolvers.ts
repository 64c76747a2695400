import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { accountOf, requireOperator, type GraphQLContext } from "../graphql/context.js";
import { AccountSettingsInput, AccountType, CreatedAccountType } from "./types.js";
import { createAccount, parseAmount, requireAccount, topUp, updateAccountSettings } from "./service.js";

@Resolver(() => AccountType)
export class AccountResolver {
  @Query(() => AccountType, { description: "The caller's account" })
  async me(@Ctx() ctx: GraphQLContext): Promise<AccountType> {
    return AccountType.from(await requireAccount(ctx.runtime.pool, accountOf(ctx)));
  }

  @Mutation(() => AccountType)
  async updateAccountSettings(@Arg("input", () => AccountSettingsInput) input: AccountSettingsInput, @Ctx() ctx: GraphQLContext): Promise<AccountType> {
    return AccountType.from(await updateAccountSettings(ctx.runtime.pool, accountOf(ctx), input));
  }

  @Mutation(() => CreatedAccountType, { description: "Operator only" })
  async createAccount(
    @Arg("name", () => String) name: string,
    @Arg("initialBalance", () => String, { nullable: true, description: "USD, e.g. \"10\"" }) initialBalance: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CreatedAccountType> {
    requireOperator(ctx);
    const micros = initialBalance == null ? 0n : parseAmount(initialBalance, "initialBalance", true);
    const { account, adminToken } = await createAccount(ctx.runtime.pool, name, micros);
    return Object.assign(new CreatedAccountType(), { account: AccountType.from(account), adminToken });
  }

  @Mutation(() => AccountType, { description: "Operator only" })
  async topUpBalance(
    @Arg("accountId", () => ID) accountId: string,
    @Arg("amount", () => String, { description: "USD, e.g. \"5.50\"" }) amount: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AccountType> {
    requireOperator(ctx);
    return AccountType.from(await topUp(ctx.runtime.pool, accountId, parseAmount(amount, "amount")));
  }
}
