import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import { formatUsd } from "../infra/money.js";
import type { JobRow, JobStatusEvent } from "./store.js";

export enum JobStatusEnum {
  QUEUED = "queued",
  RUNNING = "running",
  DONE = "done",
  FAILED = "failed",
}
registerEnumType(JobStatusEnum, { name: "JobStatus", description: "queued → running → done | failed" });

export enum JobSourceEnum {
  WEBHOOK = "webhook",
  SCHEDULE = "schedule",
  A2A = "a2a",
  MCP = "mcp",
  REPLAY = "replay",
}
registerEnumType(JobSourceEnum, { name: "JobSource", description: "What started a job: a trigger's webhook, a schedule, an A2A or MCP call, a replay" });

const toStatus = (s: string) => s as JobStatusEnum;

@ObjectType("Job", { description: "One agent run (started by a webhook, a schedule, an A2A or MCP call, or a replay)" })
export class JobType {
  @Field(() => ID) id!: string;
  @Field(() => JobStatusEnum) status!: JobStatusEnum;
  @Field(() => JobSourceEnum) source!: JobSourceEnum;
  @Field(() => ID, { nullable: true }) triggerId!: string | null;
  @Field(() => ID) agentId!: string;
  @Field(() => ID, { nullable: true }) threadId!: string | null;
  @Field(() => GraphQLJSON, { nullable: true }) result!: unknown;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Int) attempts!: number;
  @Field(() => String, { description: "USD spent on model calls, decimal string" }) cost!: string;
  @Field(() => [String]) logs!: string[];
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
      agentId: job.agentId,
      threadId: job.threadId,
      result: job.result ?? null,
      error: job.error,
      attempts: job.attempts,
      cost: formatUsd(job.costMicros),
      logs: job.logs ?? [],
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
