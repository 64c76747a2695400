import { Arg, Args, Ctx, Field, ID, Int, ObjectType, Query, registerEnumType, Resolver } from "type-graphql";
import { connectionComplexity, connectionOf, pageSize, PageArgs, type Connection } from "../graphql/connection.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { formatUsd } from "../infra/money.js";
import { pageLedger, type LedgerRow } from "./ledger-list.js";
import { usage, type UsageDimensionName } from "./usage.js";

export enum UsageDimension {
  AGENT = "AGENT",
  API_KEY = "API_KEY",
  THREAD = "THREAD",
  TRIGGER = "TRIGGER",
  MODEL = "MODEL",
  DAY = "DAY",
}
registerEnumType(UsageDimension, { name: "UsageDimension", description: "What usage rows are grouped by (DAY: UTC calendar days)" });

@ObjectType("UsageRow", { description: "Model-call spending of one group; the dimensions not grouped by are null" })
export class UsageRowType {
  @Field(() => ID, { nullable: true }) agentId!: string | null;
  @Field(() => ID, { nullable: true, description: "Null for calls made by webhook runs" }) apiKeyId!: string | null;
  @Field(() => ID, { nullable: true }) threadId!: string | null;
  @Field(() => ID, { nullable: true, description: "Null for calls made through the chat API" }) triggerId!: string | null;
  @Field(() => String, { nullable: true }) model!: string | null;
  @Field(() => String, { nullable: true, description: "YYYY-MM-DD (UTC)" }) day!: string | null;
  @Field(() => String, { description: "USD, decimal string" }) cost!: string;
  @Field(() => Int) requests!: number;
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
}

@ObjectType("LedgerEntry", { description: "One movement of the balance; the balance is the sum of all amounts" })
export class LedgerEntryType {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: "USD, decimal string: credits positive, debits negative" }) amount!: string;
  @Field(() => String, { description: "top_up, initial_balance, hold, hold_release, charge or refund" }) kind!: string;
  @Field(() => String, { nullable: true }) reference!: string | null;
  @Field(() => ID, { nullable: true }) agentId!: string | null;
  @Field(() => ID, { nullable: true }) apiKeyId!: string | null;
  @Field(() => ID, { nullable: true }) threadId!: string | null;
  @Field(() => ID, { nullable: true }) triggerId!: string | null;
  @Field(() => ID, { nullable: true }) jobId!: string | null;
  @Field(() => String, { nullable: true }) model!: string | null;
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Date) createdAt!: Date;

  static from({ amountMicros, id, ...row }: LedgerRow): LedgerEntryType {
    return Object.assign(new LedgerEntryType(), row, { id: String(id), amount: formatUsd(amountMicros) });
  }
}

const LedgerConnection = connectionOf("LedgerEntry", LedgerEntryType);

@Resolver()
export class BillingResolver {
  @Query(() => LedgerConnection, { description: "The account's ledger, newest first", complexity: connectionComplexity })
  async ledger(@Args(() => PageArgs) page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Connection<LedgerEntryType>> {
    const conn = await pageLedger(ctx.runtime.pool, accountOf(ctx), pageSize(page.first), page.after);
    return { ...conn, edges: conn.edges.map((e) => ({ cursor: e.cursor, node: LedgerEntryType.from(e.node) })) };
  }

  @Query(() => [UsageRowType], { description: "Model-call cost, requests and tokens in [from, to), grouped by the given dimensions (none: one total row)" })
  async usage(
    @Arg("from", () => Date) from: Date,
    @Arg("to", () => Date) to: Date,
    @Arg("groupBy", () => [UsageDimension]) groupBy: UsageDimension[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<UsageRowType[]> {
    const rows = await usage(ctx.runtime.pool, accountOf(ctx), from, to, groupBy.map((d) => d as string as UsageDimensionName));
    return rows.map(({ costMicros, ...r }) => Object.assign(new UsageRowType(), r, { cost: formatUsd(costMicros) }));
  }
}
