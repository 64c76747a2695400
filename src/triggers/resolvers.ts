import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { AgentType } from "../agents/types.js";
import { findAgent } from "../agents/service.js";
import { getJob, JOB_COLUMNS, type JobRow, type JobStatusEvent } from "../jobs/store.js";
import { jobEvents } from "../jobs/events.js";
import {
  createTrigger,
  currentSecret,
  listTriggers,
  requireTrigger,
  revokePreviousTriggerSecrets,
  rotateTriggerSecret,
  setTriggerSecret,
  testCommands,
  updateTrigger,
  webhookUrl,
} from "./service.js";
import { CreatedTriggerType, JobStatusEventType, JobStatusEnum, JobType, RotatedTriggerSecretType, TriggerLogEntryType, TriggerType } from "./types.js";

const toType = (ctx: GraphQLContext) => (row: Parameters<typeof TriggerType.from>[0]) => TriggerType.from(row, webhookUrl(ctx.runtime, row.id));

@Resolver(() => TriggerType)
export class TriggerResolver {
  @Query(() => [TriggerType], { description: "Every trigger of every agent of the account" })
  async triggers(@Ctx() ctx: GraphQLContext): Promise<TriggerType[]> {
    return (await listTriggers(ctx.runtime.pool, accountOf(ctx))).map(toType(ctx));
  }

  @Query(() => TriggerType, { nullable: true })
  async trigger(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<TriggerType | null> {
    try {
      return toType(ctx)(await requireTrigger(ctx.runtime.pool, accountOf(ctx), id));
    } catch (err) {
      if (err instanceof AppError && err.code === "trigger_not_found") return null;
      throw err;
    }
  }

  @Mutation(() => CreatedTriggerType)
  async createTrigger(
    @Arg("agentId", () => ID) agentId: string,
    @Arg("description", () => String, { nullable: true }) description: string | null,
    @Arg("callbackUrl", () => String, { nullable: true, description: "https:// URL that receives job.done / job.failed events" }) callbackUrl: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CreatedTriggerType> {
    const { trigger, secret, callbackSecret } = await createTrigger(ctx.runtime, accountOf(ctx), agentId, description, callbackUrl);
    const url = webhookUrl(ctx.runtime, trigger.id);
    const commands = testCommands(url, secret);
    return Object.assign(new CreatedTriggerType(), {
      trigger: toType(ctx)(trigger),
      secret,
      callbackSecret,
      webhookUrl: url,
      testCommand: commands.plain,
      signedTestCommand: commands.signed,
    });
  }

  @Mutation(() => TriggerType)
  async updateTrigger(
    @Arg("id", () => ID) id: string,
    @Arg("description", () => String, { nullable: true }) description: string | null,
    @Arg("secretRequired", () => Boolean, { nullable: true, description: "false accepts webhooks without a secret (not recommended)" })
    secretRequired: boolean | null,
    @Arg("callbackUrl", () => String, { nullable: true, description: "Omitted: unchanged; null or \"\": no callbacks any more" }) callbackUrl: string | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TriggerType> {
    const row = await updateTrigger(ctx.runtime, accountOf(ctx), id, { description, secretRequired, callbackUrl });
    return toType(ctx)(row);
  }

  @Mutation(() => TriggerType)
  async setTriggerActive(@Arg("id", () => ID) id: string, @Arg("active", () => Boolean) active: boolean, @Ctx() ctx: GraphQLContext): Promise<TriggerType> {
    const row = await updateTrigger(ctx.runtime, accountOf(ctx), id, { active });
    return toType(ctx)(row);
  }

  @Mutation(() => TriggerType, { description: "Sets a custom secret (24–256 printable characters); the previous one works for 24 more hours unless revokePrevious" })
  async setTriggerSecret(
    @Arg("id", () => ID) id: string,
    @Arg("secret", () => String) secret: string,
    @Arg("revokePrevious", () => Boolean, { defaultValue: false, description: "true: every previous secret stops working now (a leaked secret)" }) revokePrevious: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TriggerType> {
    const row = await setTriggerSecret(ctx.runtime, accountOf(ctx), id, secret, revokePrevious);
    return toType(ctx)(row);
  }

  @Mutation(() => RotatedTriggerSecretType, { description: "Issues a new secret; the previous one works for 24 more hours unless revokePrevious" })
  async rotateTriggerSecret(
    @Arg("id", () => ID) id: string,
    @Arg("revokePrevious", () => Boolean, { defaultValue: false, description: "true: every previous secret stops working now (a leaked secret)" }) revokePrevious: boolean,
    @Ctx() ctx: GraphQLContext,
  ): Promise<RotatedTriggerSecretType> {
    const rotated = await rotateTriggerSecret(ctx.runtime, accountOf(ctx), id, revokePrevious);
    return Object.assign(new RotatedTriggerSecretType(), rotated);
  }

  @Mutation(() => TriggerType, { description: "Every previous secret (still in its 24-hour grace window) stops working now; the current one stays" })
  async revokePreviousTriggerSecrets(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<TriggerType> {
    const row = await revokePreviousTriggerSecrets(ctx.runtime, accountOf(ctx), id);
    return toType(ctx)(row);
  }

  @FieldResolver(() => String, { nullable: true, description: "The current signing secret, to copy" })
  async secret(@Root() trigger: TriggerType, @Ctx() ctx: GraphQLContext): Promise<string | null> {
    return currentSecret(ctx.runtime, trigger.id);
  }

  @FieldResolver(() => AgentType, { nullable: true })
  async agent(@Root() trigger: TriggerType, @Ctx() ctx: GraphQLContext): Promise<AgentType | null> {
    const agent = await findAgent(ctx.em, trigger.accountId, trigger.agentId);
    return agent ? AgentType.from(agent) : null;
  }

  @FieldResolver(() => [TriggerLogEntryType], { description: "Recent runs, newest first" })
  async logs(
    @Root() trigger: TriggerType,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20 }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<TriggerLogEntryType[]> {
    const limit = Math.min(Math.max(first ?? 20, 1), 200);
    const { rows } = await ctx.runtime.pool.query<JobRow>(
      `select ${JOB_COLUMNS} from jobs where trigger_id = $1 and account_id = $2 order by created_at desc, id desc limit $3`,
      [trigger.id, trigger.accountId, limit],
    );
    return rows.map((j) =>
      Object.assign(new TriggerLogEntryType(), {
        jobId: j.id,
        time: j.createdAt,
        status: j.status as JobStatusEnum,
        durationMs: j.startedAt && j.finishedAt ? j.finishedAt.getTime() - j.startedAt.getTime() : null,
        threadId: j.threadId,
        error: j.error,
      }),
    );
  }
}

/** Adds `Agent.triggers` without touching the agents module. */
@Resolver(() => AgentType)
export class AgentTriggersResolver {
  @FieldResolver(() => [TriggerType])
  async triggers(@Root() agent: AgentType, @Ctx() ctx: GraphQLContext): Promise<TriggerType[]> {
    return (await listTriggers(ctx.runtime.pool, accountOf(ctx), agent.id)).map(toType(ctx));
  }
}

@Resolver(() => JobType)
export class JobResolver {
  @Query(() => JobType, { nullable: true })
  async job(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<JobType | null> {
    const job = await getJob(ctx.runtime.pool, id);
    return job && job.accountId === accountOf(ctx) ? JobType.from(job) : null;
  }

  @Subscription(() => JobStatusEventType, {
    description: "Status transitions of the account's jobs; narrow by job, trigger or agent",
    subscribe: ({ args, context }) => jobEvents((context as GraphQLContext).runtime, accountOf(context as GraphQLContext), args),
  })
  jobStatusChanged(
    @Root() event: JobStatusEvent,
    @Arg("jobId", () => ID, { nullable: true }) _jobId: string | null,
    @Arg("triggerId", () => ID, { nullable: true }) _triggerId: string | null,
    @Arg("agentId", () => ID, { nullable: true }) _agentId: string | null,
  ): JobStatusEventType {
    return JobStatusEventType.from(event);
  }
}
