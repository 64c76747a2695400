import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { accountOf, requireOperator, type GraphQLContext } from "../graphql/context.js";
import { AppError } from "../errors/app-error.js";
import { checkTokenName, issueAdminToken, listAdminTokens, revokeAdminToken } from "./admin-tokens.js";
import { AccountSettingsInput, AccountType, AdminTokenType, CreatedAccountType, CreatedAdminTokenType } from "./types.js";
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

  @Query(() => [AdminTokenType], { description: "The account's admin tokens, newest first" })
  async adminTokens(@Ctx() ctx: GraphQLContext): Promise<AdminTokenType[]> {
    return (await listAdminTokens(ctx.runtime.pool, accountOf(ctx))).map((r) => Object.assign(new AdminTokenType(), r));
  }

  @Mutation(() => CreatedAdminTokenType, { description: "A new admin token for this account; the token is shown only in this answer" })
  async createAdminToken(@Arg("name", () => String) name: string, @Ctx() ctx: GraphQLContext): Promise<CreatedAdminTokenType> {
    const { token, row } = await issueAdminToken(ctx.runtime.pool, accountOf(ctx), checkTokenName(name));
    return Object.assign(new CreatedAdminTokenType(), { token, adminToken: Object.assign(new AdminTokenType(), row) });
  }

  @Mutation(() => Boolean, { description: "The next request with the token fails on every instance; its open graphql-ws connections close with 4403" })
  async revokeAdminToken(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    if (!(await revokeAdminToken(ctx.runtime.pool, accountOf(ctx), id))) throw new AppError("not_found", `Admin token ${id} not found`);
    return true;
  }
}
