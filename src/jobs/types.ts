import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import { formatUsd } from "../infra/money.js";
import { weighs } from "../graphql/cost.js";
import type { JobRow, JobStatusEvent } from "./store.js";

export enum JobStatusEnum {
  QUEUED = "queued",
  RUNNING = "running",
  INPUT_REQUIRED = "input_required",
  DONE = "done",
  FAILED = "failed",
}
registerEnumType(JobStatusEnum, { name: "JobStatus", description: "queued → running → done | failed; a run whose script called ctx.ask waits in INPUT_REQUIRED (then queued → running again once answered)" });

export enum JobSourceEnum {
  WEBHOOK = "webhook",
  SCHEDULE = "schedule",
  A2A = "a2a",
  MCP = "mcp",
  REPLAY = "replay",
}
registerEnumType(JobSourceEnum, { name: "JobSource", description: "What started a job: a trigger's webhook, a schedule, an A2A or MCP call, a replay" });

export enum JobWaitReasonEnum {
  ACCOUNT_RUN_LIMIT = "account_run_limit",
  AGENT_RUN_LIMIT = "agent_run_limit",
}
registerEnumType(JobWaitReasonEnum, {
  name: "JobWaitReason",
  description: "Why a queued job does not run yet: its account (RUN_MAX_CONCURRENT_PER_ACCOUNT, or its fair share of the run slots) or its agent (RUN_MAX_CONCURRENT_PER_AGENT) already runs its limit",
});

const toStatus = (s: string) => s as JobStatusEnum;

@ObjectType("Job", { description: "One agent run (started by a webhook, a schedule, an A2A or MCP call, or a replay)" })
export class JobType {
  @Field(() => ID) id!: string;
  @Field(() => JobStatusEnum) status!: JobStatusEnum;
  @Field(() => JobSourceEnum) source!: JobSourceEnum;
  @Field(() => ID, { nullable: true }) triggerId!: string | null;
  @Field(() => ID, { nullable: true, description: "The schedule that fired the job (source SCHEDULE); kept after the schedule is deleted" }) scheduleId!: string | null;
  @Field(() => ID) agentId!: string;
  @Field(() => ID, { nullable: true }) threadId!: string | null;
  @weighs((c) => c.sandbox.maxResultBytes)
  @Field(() => GraphQLJSON, { nullable: true })
  result!: unknown;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Int) attempts!: number;
  @Field(() => String, { description: "USD spent on model calls, decimal string" }) cost!: string;
  @weighs((c) => c.sandbox.maxLogBytes)
  @Field(() => [String])
  logs!: string[];
  @Field(() => JobWaitReasonEnum, { nullable: true, description: "While QUEUED: the run limit it waits for (it starts when a run of its account or agent ends); null otherwise" })
  waitingFor!: JobWaitReasonEnum | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
  replayOfId!: string | null;

  static from(job: JobRow): JobType {
    return Object.assign(new JobType(), {
      id: job.id,
      status: toStatus(job.status),
      source: job.source as JobSourceEnum,
      triggerId: job.triggerId,
      scheduleId: job.scheduleId ?? null,
      agentId: job.agentId,
      threadId: job.threadId,
      result: job.result ?? null,
      error: job.error,
      attempts: job.attempts,
      cost: formatUsd(job.costMicros),
      logs: job.logs ?? [],
      waitingFor: job.status === "queued" ? ((job.waitingFor as JobWaitReasonEnum | null | undefined) ?? null) : null,
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      finishedAt: job.finishedAt,
      replayOfId: job.replayOf ?? null,
    });
  }
}

@ObjectType("JobStatusEvent")
export class JobStatusEventType {
  @Field(() => ID) jobId!: string;
  @Field(() => ID, { nullable: true }) triggerId!: string | null;
  @Field(() => ID) agentId!: string;
  @Field(() => JobStatusEnum) status!: JobStatusEnum;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Int) attempts!: number;
  @Field(() => Date) at!: Date;

  static from(e: JobStatusEvent): JobStatusEventType {
    return Object.assign(new JobStatusEventType(), { ...e, status: toStatus(e.status), at: new Date(e.at) });
  }
}
