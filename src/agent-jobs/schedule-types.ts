import { Field, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { GraphQLJSON } from "graphql-scalars";
import type { ISchedule } from "../db/schema.js";
import { formatEvery } from "../schedules/spec.js";

export enum ScheduleOverlapEnum {
  SKIP = "skip",
  BUFFER_ONE = "buffer_one",
  ALLOW_ALL = "allow_all",
}
registerEnumType(ScheduleOverlapEnum, {
  name: "ScheduleOverlap",
  description: "A firing due while the previous run still runs: SKIP it, BUFFER_ONE (run it after), or ALLOW_ALL (run it at once)",
});

@ObjectType("Schedule", { description: "An automation agent run on a clock (a Temporal Schedule); each firing is a job with source SCHEDULE" })
export class ScheduleType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => String, { nullable: true, description: "5-field cron (minute hour day-of-month month day-of-week), in `timezone`" }) cron!: string | null;
  @Field(() => String, { nullable: true, description: 'Interval such as "90s", "5m", "1h"' }) every!: string | null;
  @Field(() => String, { description: "IANA time zone of the cron expression" }) timezone!: string;
  @Field(() => GraphQLJSON, { nullable: true, description: "The payload each firing's job gets" }) payload!: unknown;
  @Field(() => ScheduleOverlapEnum) overlap!: ScheduleOverlapEnum;
  @Field(() => Boolean) paused!: boolean;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Date) createdAt!: Date;
  accountId!: string;

  static from(s: ISchedule): ScheduleType {
    return Object.assign(new ScheduleType(), {
      id: s.id,
      agentId: s.agent.id,
      accountId: s.account.id,
      cron: s.cron ?? null,
      every: s.everySeconds == null ? null : formatEvery(s.everySeconds),
      timezone: s.timezone,
      payload: s.payload ?? null,
      overlap: s.overlap as ScheduleOverlapEnum,
      paused: s.paused,
      description: s.description ?? null,
      createdAt: s.createdAt,
    });
  }
}

@ObjectType("MissedRun", { description: "A firing that made no job: it could not for SCHEDULE_FIRING_RETRY_SECONDS (the database down) and gave up" })
export class MissedRunType {
  @Field(() => Date, { description: "The firing's scheduled time" }) scheduledAt!: Date;
  @Field(() => String, { description: "The last error of its attempts" }) error!: string;
  @Field(() => Date, { description: "When it was recorded (once the database answered again)" }) recordedAt!: Date;
}

@InputType("CreateScheduleInput", { description: "Exactly one of cron and every" })
export class CreateScheduleInput {
  @Field(() => ID) agentId!: string;
  @Field(() => String, { nullable: true, description: '5-field cron, e.g. "*/15 * * * *"' }) cron?: string | null;
  @Field(() => String, { nullable: true, description: 'Interval: "1m", "5m", "1h" (at least SCHEDULE_MIN_INTERVAL_SECONDS, default 60)' }) every?: string | null;
  @Field(() => String, { nullable: true, description: 'IANA time zone for cron, default "UTC"' }) timezone?: string | null;
  @Field(() => GraphQLJSON, { nullable: true, description: "The payload each firing's job gets (default {})" }) payload?: unknown;
  @Field(() => ScheduleOverlapEnum, { nullable: true, description: "Default SKIP" }) overlap?: ScheduleOverlapEnum | null;
  @Field(() => String, { nullable: true }) description?: string | null;
}
