import { Arg, Args, Ctx, Field, FieldResolver, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import { formatUsd } from "../infra/money.js";
import { spentBy } from "../billing/usage.js";
import { cancelJob, findAudit } from "./control.js";
import { connectionComplexity, connectionOf, pageSize, PageArgs, type Connection } from "../graphql/connection.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { listJobs } from "./list.js";
import { getJob } from "./store.js";
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

@ObjectType("ToolUse", { description: "One tool a run used: a model call or an HTTP request" })
export class ToolUseType {
  @Field(() => String, { description: "model or http" }) kind!: string;
  @Field(() => String, { description: "The model id, or METHOD host" }) name!: string;
  @Field(() => String, { description: "ok, or what went wrong" }) status!: string;
  @Field(() => Int, { nullable: true }) durationMs!: number | null;
  @Field(() => String, { description: "USD, decimal string" }) cost!: string;
}

@ObjectType("JobAudit", { description: "The audit entry of a run" })
export class JobAuditType {
  @Field(() => GraphQLJSON, { nullable: true, description: "The webhook payload; null once purged" }) payload!: unknown;
  @Field(() => Date, { nullable: true, description: "When the retention policy purged the payload" }) payloadPurgedAt!: Date | null;
  @Field(() => GraphQLJSON, { nullable: true }) result!: unknown;
  @Field(() => [ToolUseType]) toolsUsed!: ToolUseType[];
  @Field(() => String, { description: "USD, decimal string" }) cost!: string;
}

function toolUse(raw: unknown): ToolUseType {
  const t = (raw ?? {}) as Record<string, unknown>;
  return Object.assign(new ToolUseType(), {
    kind: String(t.kind ?? "model"),
    name: String(t.name ?? ""),
    status: String(t.status ?? "ok"),
    durationMs: typeof t.durationMs === "number" ? Math.round(t.durationMs) : null,
    cost: formatUsd(typeof t.costMicros === "number" ? t.costMicros : 0),
  });
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

  @Mutation(() => JobType, { description: "A queued or running job becomes FAILED with error \"cancelled\"; its Temporal run is cancelled and its script stopped" })
  async cancelJob(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<JobType> {
    return JobType.from(await cancelJob(ctx.runtime, accountOf(ctx), id));
  }

  @FieldResolver(() => String, { description: "USD paid for the run's model calls across all attempts, decimal string (the sum of its ledger rows)" })
  async cost(@Root() job: JobType, @Ctx() ctx: GraphQLContext): Promise<string> {
    return formatUsd(await spentBy(ctx.runtime.pool, accountOf(ctx), "job_id", job.id));
  }

  @FieldResolver(() => JobAuditType, { nullable: true, description: "Payload, result, tools used and cost of the run" })
  async audit(@Root() job: JobType, @Ctx() ctx: GraphQLContext): Promise<JobAuditType | null> {
    const row = await findAudit(ctx.runtime.pool, job.id);
    if (!row) return null;
    return Object.assign(new JobAuditType(), {
      payload: row.payload ?? null,
      payloadPurgedAt: row.payloadPurgedAt,
      result: row.result ?? null,
      toolsUsed: (Array.isArray(row.toolsUsed) ? row.toolsUsed : []).map(toolUse),
      cost: await this.cost(job, ctx),
    });
  }

  @FieldResolver(() => JobType, { nullable: true, description: "The job this one replays" })
  async replayOf(@Root() job: JobType, @Ctx() ctx: GraphQLContext): Promise<JobType | null> {
    if (!job.replayOfId) return null;
    const original = await getJob(ctx.runtime.pool, job.replayOfId);
    return original && original.accountId === accountOf(ctx) ? JobType.from(original) : null;
  }
}
