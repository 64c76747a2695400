import { Arg, Args, Ctx, Field, ID, InputType, Query, Resolver } from "type-graphql";
import { connectionComplexity, connectionOf, pageSize, PageArgs, type Connection } from "../graphql/connection.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { listJobs } from "./list.js";
import { JobStatusEnum, JobType } from "./types.js";

export const JobConnection = connectionOf("Job", JobType);

@InputType("JobFilter", { description: "Every given condition must hold" })
export class JobFilter {
  @Field(() => JobStatusEnum, { nullable: true, description: "FAILED lists the failed jobs" }) status?: JobStatusEnum | null;
  @Field(() => ID, { nullable: true }) triggerId?: string | null;
  @Field(() => ID, { nullable: true }) agentId?: string | null;
  @Field(() => Date, { nullable: true, description: "Created at or after this time" }) createdAfter?: Date | null;
  @Field(() => Date, { nullable: true, description: "Created before this time" }) createdBefore?: Date | null;
}

@Resolver(() => JobType)
export class JobListResolver {
  @Query(() => JobConnection, { description: "The account's jobs, newest first", complexity: connectionComplexity })
  async jobs(
    @Args(() => PageArgs) page: PageArgs,
    @Arg("filter", () => JobFilter, { nullable: true }) filter: JobFilter | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<Connection<JobType>> {
    const conn = await listJobs(ctx.runtime.pool, accountOf(ctx), filter ?? {}, pageSize(page.first), page.after);
    return { ...conn, edges: conn.edges.map((e) => ({ cursor: e.cursor, node: JobType.from(e.node) })) };
  }
}
