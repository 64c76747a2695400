import { Arg, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { randomBase62 } from "../infra/ids.js";
import { requireOperator, type GraphQLContext } from "../graphql/context.js";
import { PURGE_WORKFLOW } from "../../workflows/contract.js";
import { createRetentionRun, failRetentionRun, listRetentionRuns, type RetentionRunRow } from "./retention.js";

@ObjectType("RetentionRun", { description: "One run of the retention purge; its counts grow batch by batch" })
export class RetentionRunType {
  @Field(() => ID) id!: string;
  @Field(() => Date, { description: "What was older than an account's window as of this time was purged" }) asOf!: Date;
  @Field(() => String, { description: "running, done or failed (a run stopped between batches stays running until it is run again)" }) status!: string;
  @Field(() => Int, { description: "Transactions committed so far" }) batches!: number;
  @Field(() => Int, { description: "Audit entries purged, with every copy of their payloads" }) payloads!: number;
  @Field(() => Int) idempotencyRecords!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Date) startedAt!: Date;
  @Field(() => Date, { description: "When the last batch committed" }) updatedAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;

  static from(row: RetentionRunRow): RetentionRunType {
    return Object.assign(new RetentionRunType(), row);
  }
}

/** The operator's view of retention (docs/guides/graphql.md): run it now, see the last runs. */
@Resolver(() => RetentionRunType)
export class RetentionResolver {
  @Query(() => [RetentionRunType], { description: "Operator only: the latest retention runs (scheduled or started by runRetention), newest first" })
  async retentionRuns(@Arg("first", () => Int, { defaultValue: 10 }) first: number, @Ctx() ctx: GraphQLContext): Promise<RetentionRunType[]> {
    requireOperator(ctx);
    return (await listRetentionRuns(ctx.runtime.pool, Math.max(1, Math.min(first, 100)))).map(RetentionRunType.from);
  }

  @Mutation(() => RetentionRunType, { description: "Operator only: starts a retention run now (on a worker); retentionRuns shows its progress" })
  async runRetention(@Ctx() ctx: GraphQLContext): Promise<RetentionRunType> {
    requireOperator(ctx);
    const { pool, temporal, config } = ctx.runtime;
    const id = `retention-operator-${Date.now()}-${randomBase62(4)}`;
    const asOf = new Date();
    await createRetentionRun(pool, id, asOf);
    await temporal.client.workflow.start(PURGE_WORKFLOW, { taskQueue: config.temporal.taskQueue, workflowId: id, args: [asOf.toISOString(), id] }).catch(async (err: unknown) => {
      await failRetentionRun(pool, id, String(err));
      throw err;
    });
    return RetentionRunType.from((await listRetentionRuns(pool, 1, id))[0]!);
  }
}
