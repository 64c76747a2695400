import { Field, ID, Int, ObjectType } from "type-graphql";
import { JobStatusEnum } from "../jobs/types.js";
import type { TriggerRow } from "./service.js";

// The job types moved to jobs/ (jobs own their vocabulary); re-exported for existing importers.
export { JobStatusEnum, JobStatusEventType, JobType } from "../jobs/types.js";

@ObjectType("Trigger", { description: "A webhook that starts agent runs: POST JSON to webhookUrl" })
export class TriggerType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Boolean, { description: "Inactive triggers reject webhooks with 403 trigger_inactive" }) active!: boolean;
  @Field(() => Boolean, { description: "When false, webhooks need no secret or signature" }) secretRequired!: boolean;
  @Field(() => String) webhookUrl!: string;
  @Field(() => String, { nullable: true, description: "Where job.done / job.failed events are POSTed (Standard Webhooks, signed with callbackSecret); null: none" })
  callbackUrl!: string | null;
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
      callbackUrl: row.callbackUrl,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    });
  }
}

@ObjectType("CreatedTrigger")
export class CreatedTriggerType {
  @Field(() => TriggerType) trigger!: TriggerType;
  @Field(() => String, { description: "The signing secret (whsec_…); also readable later as Trigger.secret" }) secret!: string;
  @Field(() => String, { description: "The secret completion callbacks are signed with (whsec_…, Standard Webhooks); also readable later as Trigger.callbackSecret" })
  callbackSecret!: string;
  @Field(() => String) webhookUrl!: string;
  @Field(() => String, { description: "A ready-to-run curl with the x-trigger-secret header and a sample JSON body" }) testCommand!: string;
  @Field(() => String, { description: "The same request signed with X-Service-Signature (HMAC-SHA256) and X-Service-Timestamp" })
  signedTestCommand!: string;
}

@ObjectType("RotatedTriggerSecret")
export class RotatedTriggerSecretType {
  @Field(() => String) secret!: string;
  @Field(() => Date, { description: "The previous secret keeps working until then (24 hours; now with revokePrevious)" }) previousSecretExpiresAt!: Date;
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
