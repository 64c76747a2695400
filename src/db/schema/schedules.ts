import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { agentOwned } from "./agent-owned.js";

/** Schedules and the firings that never made their job (src/schedules). */

/** What a schedule does when a firing is due while the previous one still runs (Temporal's overlap policy). */
export const SCHEDULE_OVERLAPS = ["skip", "buffer_one", "allow_all"] as const;
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];

/**
 * A clock for an automation agent (docs/guides/schedules.md). This row is what the API lists and what a firing
 * checks; the clock itself is the Temporal Schedule of the same id (src/schedules/clock.ts).
 * Exactly one of `cron` (5 fields) and `everySeconds` is set.
 */
export const Schedule = defineEntity({
  name: "Schedule",
  tableName: "schedules",
  properties: {
    ...agentOwned(),
    cron: p.string().length(200).nullable(),
    everySeconds: p.integer().nullable(),
    timezone: p.string().length(100),
    /** The JSON each firing's job gets as its payload. */
    payload: p.json<unknown>().nullable(),
    overlap: p.enum(SCHEDULE_OVERLAPS).default("skip"),
    description: p.text().nullable(),
    paused: p.boolean().default(false),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  checks: [{ name: "schedules_cron_xor_every", expression: "(cron is null) <> (every_seconds is null)" }],
});
export type ISchedule = InferEntity<typeof Schedule>;

/**
 * A firing of a schedule that never made its job: its activity kept failing (the database down)
 * for SCHEDULE_FIRING_RETRY_SECONDS, and the firing gave up. Written once the database answers
 * again, keyed by the firing's key (`<schedule id>-<scheduled time>`), so a retried write is one
 * row; `Schedule.missedRuns` lists the latest. Goes with its schedule.
 */
export const ScheduleMissedFiring = defineEntity({
  name: "ScheduleMissedFiring",
  tableName: "schedule_missed_firings",
  properties: {
    firingKey: p.string().length(300).primary(),
    schedule: () => p.manyToOne(Schedule).deleteRule("cascade").index(),
    /** The firing's nominal time (from its key). */
    scheduledAt: p.datetime(),
    /** The last error of its attempts. */
    error: p.text(),
    recordedAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
});
export type IScheduleMissedFiring = InferEntity<typeof ScheduleMissedFiring>;
