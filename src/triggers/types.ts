import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import { formatUsd } from "../infra/money.js";
import type { JobRow, JobStatusEvent } from "../jobs/store.js";
import type { TriggerRow } from "./service.js";

export enum JobStatusEnum {
  QUEUED = "queued",
  RUNNING = "running",
  DONE = "done",
  FAILED = "failed",
}
registerEnumType(JobStatusEnum, { name: "JobStatus", description: "queued → running → done | failed" });

const toStatus = (s: string) => s as JobStatusEnum;

@ObjectType("Trigger", { description: "A webhook that starts agent runs: POST JSON to webhookUrl" })
export class TriggerType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Boolean, { description: "Inactive triggers reject webhooks with 403 trigger_inactive" }) active!: boolean;
  @Field(() => Boolean, { description: "When false, webhooks need no secret or signature" }) secretRequired!: boolean;
  @Field(() => String) webhookUrl!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
  accountId!: string;

  static from(row: TriggerRow, webhookUrl: string): TriggerType {
    return Object.assign(new TriggerType(), {
      id: row.id,
      agentId: row.agentId,
      accountId: row.accountId,
      description: row.description,
      active: row.active,
      secretRequired: row.secretRequired,
      webhookUrl,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    });
  }
}

@ObjectType("CreatedTrigger")
export class CreatedTriggerType {
  @Field(() => TriggerType) trigger!: TriggerType;
  @Field(() => String, { description: "The signing secret (whsec_…); also readable later as Trigger.secret" }) secret!: string;
  @Field(() => String) webhookUrl!: string;
  @Field(() => String, { description: "A ready-to-run curl with the x-trigger-secret header and a sample JSON body" }) testCommand!: string;
  @Field(() => String, { description: "The same request signed with X-Service-Signature (HMAC-SHA256) and X-Service-Timestamp" })
  signedTestCommand!: string;
}

@ObjectType("RotatedTriggerSecret")
export class RotatedTriggerSecretType {
  @Field(() => String) secret!: string;
  @Field(() => Date, { description: "The previous secret keeps working until then (24 hours)" }) previousSecretExpiresAt!: Date;
}

@ObjectType("TriggerLogEntry", { description: "One run of a trigger, for its log" })
export class TriggerLogEntryType {
  @Field(() => ID) jobId!: string;
  @Field(() => Date, { description: "When the webhook was accepted" }) time!: Date;
  @Field(() => JobStatusEnum) status!: JobStatusEnum;
  @Field(() => Int, { nullable: true, description: "Milliseconds from start to finish" }) durationMs!: number | null;
  @Field(() => ID, { nullable: true }) threadId!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType("Job", { description: "One agent run started by a webhook" })
export class JobType {
  @Field(() => ID) id!: string;
  @Field(() => JobStatusEnum) status!: JobStatusEnum;
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

  static from(job: JobRow): JobType {
    return Object.assign(new JobType(), {
      id: job.id,
      status: toStatus(job.status),
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
