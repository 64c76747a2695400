import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";
import { Agent } from "./agents.js";
import { Trigger } from "./triggers.js";

/** Jobs, their run journal, their audit entries and the retention runs that purge them (src/jobs). */

/** `input_required`: the run waits for a person's answer to `ctx.ask` (src/input-requests/), holding no run slot. */
export const JOB_STATUSES = ["queued", "running", "input_required", "done", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What started a job (docs/guides/schedules.md): a trigger's webhook, a schedule, an A2A or MCP call, a replay. */
export const JOB_SOURCES = ["webhook", "schedule", "a2a", "mcp", "replay"] as const;
export type JobSource = (typeof JOB_SOURCES)[number];

export const Job = defineEntity({
  name: "Job",
  tableName: "jobs",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    agent: () => p.manyToOne(Agent).deleteRule("cascade"),
    trigger: () => p.manyToOne(Trigger).deleteRule("set null").nullable(),
    status: p.enum(JOB_STATUSES).default("queued"),
    source: p.enum(JOB_SOURCES).default("webhook"),
    threadId: p.string().nullable(),
    result: p.json<unknown>().nullable(),
    error: p.text().nullable(),
    attempts: p.integer().default(0),
    costMicros: p.bigint("number").default(0),
    logs: p.json<unknown[]>().nullable(),
    /** The job this one replays (same payload, started by replayJob). */
    replayOf: p.string().nullable(),
    /** The schedule that fired this job (source `schedule`); kept after the schedule is deleted. */
    scheduleId: p.string().nullable(),
    /** When the Temporal workflow was started; null rows are picked up by the dispatcher. */
    dispatchedAt: p.datetime().nullable(),
    /** A dispatcher's claim on an undispatched job until this time, so API instances share the backlog. */
    dispatchLeaseUntil: p.datetime().nullable(),
    /** Why the queued job's workflow waits to begin (src/jobs/store.ts WAIT_REASONS): its account's or agent's run limit. */
    waitingFor: p.string().length(32).nullable(),
    /** W3C `traceparent` of the webhook request that created the job (only when tracing is on), so the later workflow start continues its trace. */
    traceContext: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
  indexes: [
    { properties: ["trigger", "createdAt"] },
    { properties: ["agent", "createdAt"] },
    // A schedule's recent jobs.
    { name: "jobs_schedule_created_idx", properties: ["scheduleId", "createdAt"], where: { scheduleId: { $ne: null } } },
    { name: "jobs_undispatched_idx", properties: ["createdAt"], where: { dispatchedAt: null } },
    // The jobs connection: newest first per account, optionally one status (the failed-jobs view).
    { name: "jobs_account_created_idx", properties: ["account", "createdAt", "id"] },
    { name: "jobs_account_status_created_idx", properties: ["account", "status", "createdAt", "id"] },
    // /metrics counts active jobs through this index: bounded by the work in flight, not by history.
    { name: "jobs_active_idx", properties: ["status"], where: "status in ('queued', 'running')" },
    // ...and the runs waiting for a person's answer (they may wait for days: kept apart from the work in flight).
    { name: "jobs_input_required_idx", properties: ["status"], where: "status = 'input_required'" },
    // jobEventsSince (a listener's reconnect) reads the jobs changed since a time: their last transition's time.
    { name: "jobs_changed_at_idx", expression: `create index "jobs_changed_at_idx" on "jobs" ((coalesce("finished_at", "started_at", "created_at")))` },
  ],
});
export type IJob = InferEntity<typeof Job>;

/**
 * The run journal: one row per journaled step of a job (`ctx.step`, every
 * `ctx.chat` and `ctx.fetch`). A retried or resumed run returns a `done` step's result instead of
 * executing it again; a `started` row is a step cut in flight, executed again.
 */
export const JobStep = defineEntity({
  name: "JobStep",
  tableName: "job_steps",
  properties: {
    job: () => p.manyToOne(Job).deleteRule("cascade").primary(),
    /** `<seq>:<kind>[:<name>]`, the call's position in the run: the same on every attempt. */
    key: p.string().length(200).primary(),
    kind: p.string().length(20),
    status: p.string().length(20),
    result: p.json<unknown>().nullable(),
    /** What this step actually paid (model calls); the job's cost is the sum over its steps. */
    costMicros: p.bigint("number").default(0),
    /** How many times the step was started (more than 1: cut in flight by a crash). */
    executions: p.integer().default(1),
    /** Where the run's journaled counter stood after the step, so a replayed step skips what ran inside it. */
    seqAfter: p.integer().nullable(),
    startedAt: p.datetime().onCreate(now).defaultRaw("now()"),
    finishedAt: p.datetime().nullable(),
  },
  primaryKeys: ["job", "key"],
});
export type IJobStep = InferEntity<typeof JobStep>;

export const AuditEntry = defineEntity({
  name: "AuditEntry",
  tableName: "audit_entries",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    job: () => p.manyToOne(Job).deleteRule("cascade").nullable().index(),
    kind: p.string().length(40),
    /** The inbound payload; nulled by the retention schedule after the account's window. */
    payload: p.json<unknown>().nullable(),
    result: p.json<unknown>().nullable(),
    modelCalls: p.json<unknown[]>().nullable(),
    /** One item per tool call: `{ kind: "model" | "http", name, status, durationMs, costMicros }`. */
    toolsUsed: p.json<unknown[]>().nullable(),
    costMicros: p.bigint("number").default(0),
    payloadPurgedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [
    { properties: ["account", "createdAt"] },
    // Retention's batches take the oldest payloads not purged yet (jobs/retention.ts): once purged, an entry leaves this index.
    { name: "audit_entries_unpurged_idx", properties: ["createdAt"], where: { payloadPurgedAt: null } },
  ],
});
export type IAuditEntry = InferEntity<typeof AuditEntry>;

/**
 * One run of the retention purge (jobs/retention.ts), the operator's record of it: each batch
 * adds its counts in its own transaction, so the row says how far a run got even after a crash.
 */
export const RetentionRun = defineEntity({
  name: "RetentionRun",
  tableName: "retention_runs",
  properties: {
    id: p.string().length(100).primary(),
    /** "Now" for the whole run: what is older than an account's window as of this time goes. */
    asOf: p.datetime(),
    /** running, done or failed (a run that stopped between batches stays running until a rerun of it finishes). */
    status: p.string().length(16),
    batches: p.integer().default(0),
    payloads: p.integer().default(0),
    idempotencyRecords: p.integer().default(0),
    error: p.text().nullable(),
    startedAt: p.datetime().defaultRaw("now()"),
    updatedAt: p.datetime().defaultRaw("now()"),
    finishedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ["startedAt"] }],
});
export type IRetentionRun = InferEntity<typeof RetentionRun>;
