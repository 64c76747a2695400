import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { AppError } from "../errors/app-error.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { AgentType } from "../agents/types.js";
import { requireAgent } from "../agents/service.js";
import { JobType } from "../jobs/types.js";
import { getJob } from "../jobs/store.js";
import { listJobs } from "../jobs/list.js";
import { nextRunTimes } from "../schedules/clock.js";
import { createSchedule, deleteSchedule, findSchedule, listSchedules, requireSchedule, setSchedulePaused } from "../schedules/service.js";
import { listMissedFirings, MAX_KEPT } from "../schedules/missed.js";
import { CreateScheduleInput, MissedRunType, ScheduleType } from "./schedule-types.js";
import { startAgentJob } from "./start.js";

const MAX_NEXT = 10;
const MAX_RECENT = 100;

@Resolver(() => ScheduleType)
export class ScheduleResolver {
  @Query(() => ScheduleType, { nullable: true })
  async schedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ScheduleType | null> {
    const schedule = await findSchedule(ctx.em, accountOf(ctx), id);
    return schedule ? ScheduleType.from(schedule) : null;
  }

  @Mutation(() => ScheduleType, { description: "Runs an automation agent on a clock (a Temporal Schedule); BAD_USER_INPUT names the bad field" })
  async createSchedule(@Arg("input", () => CreateScheduleInput) input: CreateScheduleInput, @Ctx() ctx: GraphQLContext): Promise<ScheduleType> {
    const accountId = accountOf(ctx);
    const agent = await requireAgent(ctx.em, accountId, input.agentId);
    return ScheduleType.from(await createSchedule(ctx.runtime, ctx.em, accountId, agent, input));
  }

  @Mutation(() => ScheduleType, { description: "Stops the schedule's firings until resumeSchedule" })
  async pauseSchedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ScheduleType> {
    return ScheduleType.from(await setSchedulePaused(ctx.runtime, ctx.em, accountOf(ctx), id, true));
  }

  @Mutation(() => ScheduleType)
  async resumeSchedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ScheduleType> {
    return ScheduleType.from(await setSchedulePaused(ctx.runtime, ctx.em, accountOf(ctx), id, false));
  }

  @Mutation(() => Boolean, { description: "Deletes the schedule and its Temporal Schedule; its past jobs stay" })
  async deleteSchedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return deleteSchedule(ctx.runtime, ctx.em, accountOf(ctx), id);
  }

  @Mutation(() => JobType, { description: "Starts one run now with the schedule's payload (source SCHEDULE), paused or not; the clock is unchanged" })
  async runScheduleNow(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<JobType> {
    const accountId = accountOf(ctx);
    const schedule = await requireSchedule(ctx.em, accountId, id);
    const { jobId } = await startAgentJob(ctx.runtime, {
      accountId,
      agentId: schedule.agent.id,
      source: "schedule",
      scheduleId: id,
      payloadText: JSON.stringify(schedule.payload ?? null),
      idempotencyKey: null,
    });
    const job = await getJob(ctx.runtime.pool, jobId);
    if (!job) throw new AppError("not_found", `Job ${jobId} not found`);
    return JobType.from(job);
  }

  @FieldResolver(() => [Date], { description: "The next firing times (none while paused), from Temporal; empty when Temporal cannot be asked" })
  async nextRunTimes(@Root() schedule: ScheduleType, @Arg("first", () => Int, { nullable: true, defaultValue: 5 }) first: number, @Ctx() ctx: GraphQLContext): Promise<Date[]> {
    // Temporal still computes the times of a paused schedule: they are not runs.
    if (schedule.paused) return [];
    const times = await nextRunTimes(ctx.runtime, schedule.id);
    return times.slice(0, Math.min(Math.max(first ?? 5, 0), MAX_NEXT));
  }

  @FieldResolver(() => [MissedRunType], { description: "Firings that made no job (the database down for SCHEDULE_FIRING_RETRY_SECONDS), newest first; the latest 100 are kept" })
  async missedRuns(@Root() schedule: ScheduleType, @Arg("first", () => Int, { nullable: true, defaultValue: 10 }) first: number, @Ctx() ctx: GraphQLContext): Promise<MissedRunType[]> {
    const rows = await listMissedFirings(ctx.runtime.pool, schedule.id, Math.min(Math.max(first ?? 10, 1), MAX_KEPT));
    return rows.map((r) => Object.assign(new MissedRunType(), r));
  }

  @FieldResolver(() => [JobType], { description: "The schedule's latest jobs, newest first" })
  async recentJobs(@Root() schedule: ScheduleType, @Arg("first", () => Int, { nullable: true, defaultValue: 10 }) first: number, @Ctx() ctx: GraphQLContext): Promise<JobType[]> {
    const limit = Math.min(Math.max(first ?? 10, 1), MAX_RECENT);
    const page = await listJobs(ctx.runtime.pool, schedule.accountId, { scheduleId: schedule.id }, limit, null);
    return page.edges.map((e) => JobType.from(e.node));
  }
}

@Resolver(() => AgentType)
export class AgentSchedulesResolver {
  @FieldResolver(() => [ScheduleType], { description: "The agent's schedules (automation agents only have any)" })
  async schedules(@Root() agent: AgentType, @Ctx() ctx: GraphQLContext): Promise<ScheduleType[]> {
    return (await listSchedules(ctx.em, accountOf(ctx), agent.id)).map(ScheduleType.from);
  }
}
