import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The whole data model. Money columns are integer micro-USD (`bigint`). Ids are prefixed random
 * strings (see infra/ids.ts), so they can appear in URLs and cannot be enumerated.
 * Hot paths (chat, webhook ingest, billing) use hand-written SQL against these same tables, on the
 * same pool; new hand-written SQL takes table and column names from here via `src/db/names.ts`.
 */

const now = () => new Date();

export const Account = defineEntity({
  name: "Account",
  tableName: "accounts",
  properties: {
    id: p.string().primary(),
    name: p.string().length(200),
    balanceMicros: p.bigint("number").default(0),
    retentionDays: p.integer().default(30),
    relaxSignatureTimestamp: p.boolean().default(false),
    defaultRateLimitPerMinute: p.integer().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  // The last line of defence for "the balance never goes below zero": holds are conditional
  // updates, and this makes any bug in them fail loudly instead of overdrawing.
  checks: [{ name: "accounts_balance_non_negative", expression: "balance_micros >= 0" }],
});
export type IAccount = InferEntity<typeof Account>;

export const AdminToken = defineEntity({
  name: "AdminToken",
  tableName: "admin_tokens",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    tokenHash: p.string().length(64).unique(),
    prefix: p.string().length(16),
    name: p.string().length(200).default(""),
    /** Updated at most about once a minute per token (no write per request). */
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
});
export type IAdminToken = InferEntity<typeof AdminToken>;

export const Agent = defineEntity({
  name: "Agent",
  tableName: "agents",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    name: p.string().length(200),
    instructions: p.text().default(""),
    defaultModel: p.string().length(100),
    allowedModels: p.json<string[]>().nullable(),
    /** Models tried in order when the chosen one's upstream fails before answering (DESIGN §19). */
    fallbackModels: p.json<string[]>().nullable(),
    script: p.text().nullable(),
    /** Host patterns `ctx.fetch` may reach (`api.example.com`, `*.example.com`); empty: none. */
    egressAllow: p.json<string[]>().nullable(),
    /** Per-agent run limits; null means the operator's default (always capped by its maximum). */
    cpuTimeLimitMs: p.integer().nullable(),
    wallTimeLimitMs: p.integer().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  indexes: [{ properties: ["account", "createdAt"] }],
});
export type IAgent = InferEntity<typeof Agent>;

/** The key columns of a row that belongs to an agent of an account, deleted with either. */
const agentOwned = () => ({
  id: p.string().primary(),
  account: () => p.manyToOne(Account).deleteRule("cascade").index(),
  agent: () => p.manyToOne(Agent).deleteRule("cascade").index(),
});

/** `ctx.secrets.NAME` of an automation agent: sealed like trigger secrets, never returned by any API. */
export const AgentSecret = defineEntity({
  name: "AgentSecret",
  tableName: "agent_secrets",
  properties: {
    agent: () => p.manyToOne(Agent).deleteRule("cascade").primary(),
    name: p.string().length(100).primary(),
    sealedValue: p.text(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  primaryKeys: ["agent", "name"],
});
export type IAgentSecret = InferEntity<typeof AgentSecret>;

export const ApiKey = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    ...agentOwned(),
    name: p.string().length(200),
    keyHash: p.string().length(64).unique(),
    prefix: p.string().length(16),
    last4: p.string().length(4),
    rateLimitPerMinute: p.integer().nullable(),
    /** From this instant on the key answers 401; null: never. */
    expiresAt: p.datetime().nullable(),
    /** The most the key may spend per `spendLimitPeriod` (DAY, MONTH, TOTAL; UTC); null: no limit. */
    spendLimitMicros: p.bigint("number").nullable(),
    spendLimitPeriod: p.string().length(10).nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    /** SECRET: an `a2a_` key; OAUTH: a consent given to an OAuth client (DESIGN §20), its tokens resolved to this row. */
    kind: p.string().length(10).default("SECRET"),
    /** OAUTH: the client's `client_name` (or its redirect host) and `client_id` as consented. */
    clientName: p.string().length(200).nullable(),
    clientId: p.text().nullable(),
    /** OAUTH: the authorization server's grant (src/oauth); deleting the key revokes it. */
    grantId: p.string().length(100).nullable().unique(),
  },
});
export type IApiKey = InferEntity<typeof ApiKey>;

/**
 * What a key with a spend limit has held and spent in one period (its UTC start; TOTAL: the
 * epoch). Moved only by the statements that move the balance (src/billing/key-spend.ts), so holds
 * count against it exactly as against the balance.
 */
export const ApiKeySpend = defineEntity({
  name: "ApiKeySpend",
  tableName: "api_key_spend",
  properties: {
    apiKey: () => p.manyToOne(ApiKey).deleteRule("cascade").primary(),
    periodStart: p.datetime().primary(),
    spentMicros: p.bigint("number").default(0),
  },
  primaryKeys: ["apiKey", "periodStart"],
});
export type IApiKeySpend = InferEntity<typeof ApiKeySpend>;

/**
 * What the OAuth authorization server (oidc-provider, src/oauth) stores: one row per model
 * instance (its `kind`: Grant, Session, Interaction, AuthorizationCode, AccessToken, RefreshToken,
 * Client, …), shared by every API instance. Token and code ids are stored as SHA-256 hashes.
 */
export const OAuthModel = defineEntity({
  name: "OAuthModel",
  tableName: "oauth_models",
  properties: {
    kind: p.string().length(40).primary(),
    id: p.string().length(255).primary(),
    payload: p.json<Record<string, unknown>>(),
    grantId: p.string().length(100).nullable().index(),
    uid: p.string().length(100).nullable().index(),
    expiresAt: p.datetime().nullable().index(),
    consumedAt: p.datetime().nullable(),
  },
  primaryKeys: ["kind", "id"],
});
export type IOAuthModel = InferEntity<typeof OAuthModel>;

export const Thread = defineEntity({
  name: "Thread",
  tableName: "threads",
  properties: {
    ...agentOwned(),
    /** Set while a turn is in flight; a stale lease (crashed instance) expires on its own. */
    busyUntil: p.datetime().nullable(),
    /** The turn (its ledger reference) that holds the lease: a reclaim or a late finish acts only on its own turn. */
    turnId: p.string().length(100).nullable(),
    messageCount: p.integer().default(0),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
  indexes: [{ name: "threads_agent_created_idx", properties: ["agent", "createdAt", "id"] }],
});
export type IThread = InferEntity<typeof Thread>;

export const Message = defineEntity({
  name: "Message",
  tableName: "messages",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    thread: () => p.manyToOne(Thread).deleteRule("cascade"),
    seq: p.integer(),
    role: p.string().length(20),
    content: p.text(),
    /** Tool calls, the tool call a tool result answers, image parts (src/threads/store.ts MessageData). */
    data: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  uniques: [{ properties: ["thread", "seq"] }],
});
export type IMessage = InferEntity<typeof Message>;

/** A stored Responses API response (GET /api/v1/responses/{id}, previous_response_id → its thread). */
export const StoredResponse = defineEntity({
  name: "StoredResponse",
  tableName: "responses",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    agent: () => p.manyToOne(Agent).deleteRule("cascade"),
    thread: () => p.manyToOne(Thread).deleteRule("cascade"),
    body: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
});
export type IStoredResponse = InferEntity<typeof StoredResponse>;

export const Trigger = defineEntity({
  name: "Trigger",
  tableName: "triggers",
  properties: {
    ...agentOwned(),
    description: p.text().nullable(),
    active: p.boolean().default(true),
    secretRequired: p.boolean().default(true),
    /** Where a finished job's `job.done` / `job.failed` event is POSTed (DESIGN §17); null: no callback. */
    callbackUrl: p.text().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
});
export type ITrigger = InferEntity<typeof Trigger>;

export const TriggerSecret = defineEntity({
  name: "TriggerSecret",
  tableName: "trigger_secrets",
  properties: {
    id: p.string().primary(),
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade"),
    /** AES-256-GCM sealed secret (infra/crypto.ts), so owners can copy it later. */
    sealedSecret: p.text(),
    /** Null for the current secret; the end of the grace window for a rotated-out one. */
    expiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [{ properties: ["trigger", "expiresAt"] }],
});
export type ITriggerSecret = InferEntity<typeof TriggerSecret>;

/** The secrets a trigger signs its completion callbacks with: kept like its inbound secrets (same shape, same 24-hour grace). */
export const TriggerCallbackSecret = defineEntity({
  name: "TriggerCallbackSecret",
  tableName: "trigger_callback_secrets",
  properties: {
    id: p.string().primary(),
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade"),
    sealedSecret: p.text(),
    expiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [{ properties: ["trigger", "expiresAt"] }],
});
export type ITriggerCallbackSecret = InferEntity<typeof TriggerCallbackSecret>;

/** `input_required`: the run waits for a person's answer to `ctx.ask` (src/input-requests/), holding no run slot. */
export const JOB_STATUSES = ["queued", "running", "input_required", "done", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What a schedule does when a firing is due while the previous one still runs (Temporal's overlap policy). */
export const SCHEDULE_OVERLAPS = ["skip", "buffer_one", "allow_all"] as const;
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];

/**
 * A clock for an automation agent (DESIGN §18). This row is what the API lists and what a firing
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

/** What started a job (DESIGN §18): a trigger's webhook, a schedule, an A2A or MCP call, a replay. */
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
    // jobEventsSince (a listener's reconnect) reads the jobs changed since a time: their last transition's time.
    { name: "jobs_changed_at_idx", expression: `create index "jobs_changed_at_idx" on "jobs" ((coalesce("finished_at", "started_at", "created_at")))` },
  ],
});
export type IJob = InferEntity<typeof Job>;

/**
 * The run journal (DESIGN §13): one row per journaled step of a job (`ctx.step`, every
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

export const INPUT_REQUEST_STATUSES = ["pending", "answered", "timed_out"] as const;
export type InputRequestStatus = (typeof INPUT_REQUEST_STATUSES)[number];

/**
 * A run's question to a person (`ctx.ask`, DESIGN §22, src/input-requests/): one row per ask of a
 * job, keyed like a journaled step by its position in the run. Answered at most once.
 */
export const InputRequest = defineEntity({
  name: "InputRequest",
  tableName: "input_requests",
  properties: {
    id: p.string().primary(),
    job: () => p.manyToOne(Job).deleteRule("cascade"),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    /** The ask's journal key (`<seq>:ask`): the same on every re-run of the script. */
    stepKey: p.string().length(200),
    /** Emptied by the retention purge (a prompt often quotes the payload). */
    prompt: p.text(),
    schema: p.json<unknown>().nullable(),
    status: p.enum(INPUT_REQUEST_STATUSES).default("pending"),
    answer: p.json<unknown>().nullable(),
    /** sha256 of the answer URL's token (the token itself is derived, never stored). */
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    answeredAt: p.datetime().nullable(),
    /** graphql or answer_url. */
    answeredVia: p.string().length(20).nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  uniques: [{ name: "input_requests_job_step_key_unique", properties: ["job", "stepKey"] }],
});
export type IInputRequest = InferEntity<typeof InputRequest>;

/** What an outbound delivery carries (DESIGN §17): a job's completion callback, a trigger's test event, an A2A push, a job's input request (`job.input_required`). */
export const DELIVERY_KINDS = ["job_callback", "test_callback", "a2a_push", "job_input"] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One delivery cycle of one outbound message (the `deliver` workflow's id is this row's id). A
 * redelivery is a new cycle with the same `webhookId`. Inserted in the transaction that commits
 * the event (a job's terminal transition), started on Temporal by the delivery dispatcher.
 */
export const Delivery = defineEntity({
  name: "Delivery",
  tableName: "deliveries",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    job: () => p.manyToOne(Job).deleteRule("cascade").nullable().index(),
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade").nullable(),
    kind: p.enum(DELIVERY_KINDS),
    /** `webhook-id`: the same on every attempt and every redelivery of the message. */
    webhookId: p.string().length(100),
    /** The request body, byte for byte the same on every attempt and redelivery; null: built from the job when first sent. */
    body: p.text().nullable(),
    /** A2A push: the push notification config the event goes to. */
    target: p.string().length(255).nullable(),
    /** A2A push: the task state the event reports (working, completed, failed, canceled). */
    event: p.string().length(40).nullable(),
    status: p.enum(DELIVERY_STATUSES).default("pending"),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    finishedAt: p.datetime().nullable(),
    /** When the `deliver` workflow was started; null rows are picked up by the delivery dispatcher. */
    dispatchedAt: p.datetime().nullable(),
    dispatchLeaseUntil: p.datetime().nullable(),
    traceContext: p.string().length(64).nullable(),
    /** While an attempt holds one of its account's outbound slots (OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT): until when, at the latest. */
    attemptLeaseUntil: p.datetime().nullable(),
  },
  indexes: [
    { name: "deliveries_undispatched_idx", properties: ["createdAt"], where: { dispatchedAt: null } },
    // The stuck-delivery sweep reads the pending rows only.
    { name: "deliveries_pending_idx", properties: ["dispatchedAt"], where: { status: "pending" } },
    // An account's attempts in flight, counted before each attempt.
    { name: "deliveries_attempt_lease_idx", properties: ["account", "attemptLeaseUntil"], where: { attemptLeaseUntil: { $ne: null } } },
  ],
});
export type IDelivery = InferEntity<typeof Delivery>;

/** One HTTP attempt of a delivery: what the receiver answered, or why there was no answer. */
export const DeliveryAttempt = defineEntity({
  name: "DeliveryAttempt",
  tableName: "delivery_attempts",
  properties: {
    delivery: () => p.manyToOne(Delivery).deleteRule("cascade").primary(),
    attempt: p.integer().primary(),
    at: p.datetime(),
    url: p.text(),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    error: p.text().nullable(),
    /** Bytes of the response body read (the read stops at OUTBOUND_MAX_RESPONSE_BYTES). */
    responseBytes: p.integer().default(0),
    /** The start of the response body, for the delivery log. */
    responseExcerpt: p.text().nullable(),
  },
  primaryKeys: ["delivery", "attempt"],
});
export type IDeliveryAttempt = InferEntity<typeof DeliveryAttempt>;

export const IdempotencyRecord = defineEntity({
  name: "IdempotencyRecord",
  tableName: "idempotency_records",
  properties: {
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade").primary(),
    key: p.string().length(255).primary(),
    job: () => p.manyToOne(Job).deleteRule("cascade"),
    expiresAt: p.datetime().index(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  primaryKeys: ["trigger", "key"],
});
export type IIdempotencyRecord = InferEntity<typeof IdempotencyRecord>;

/**
 * Idempotency of jobs started without a trigger (A2A `messageId`, MCP): scoped per agent and
 * source, kept 24 hours like a webhook's record.
 */
export const AgentIdempotencyRecord = defineEntity({
  name: "AgentIdempotencyRecord",
  tableName: "agent_idempotency_records",
  properties: {
    agent: () => p.manyToOne(Agent).deleteRule("cascade").primary(),
    source: p.enum(JOB_SOURCES).primary(),
    key: p.string().length(255).primary(),
    job: () => p.manyToOne(Job).deleteRule("cascade"),
    expiresAt: p.datetime().index(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  primaryKeys: ["agent", "source", "key"],
});
export type IAgentIdempotencyRecord = InferEntity<typeof AgentIdempotencyRecord>;

/**
 * An A2A task (DESIGN §15). A chat agent's task is a chat turn: its state, answer and error live
 * here. An automation agent's task is a job (same id): its state and result are the job's, this
 * row keeps what A2A needs besides (context, the request message).
 */
export const A2aTask = defineEntity({
  name: "A2aTask",
  tableName: "a2a_tasks",
  properties: {
    ...agentOwned(),
    contextId: p.string().length(255),
    /** `chat` (a turn on thread `contextId`) or `job` (the job with this id). */
    kind: p.string().length(10),
    /**
     * submitted | working | completed | failed | canceled. Job tasks: the job's, written by the
     * task's insert and by each job status transition (outbound/store.ts `jobTaskCte`), for
     * ListTasks' filter; reads take it from the job. Null only in rows older than that.
     */
    state: p.string().length(20).nullable(),
    /** The user's message as sent (A2A JSON), the task's history with the answer. */
    request: p.json<Record<string, unknown>>(),
    answer: p.text().nullable(),
    error: p.text().nullable(),
    /** Chat tasks: someone waits for the end through NOTIFY (SubscribeToTask, CancelTask); the end is NOTIFYed only then. */
    followed: p.boolean().default(false),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    /** The task's status time, ListTasks' order: a chat task's start or end; a job task's latest transition. */
    updatedAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  // ListTasks pages by this index in keyset order (newest status first). It takes updated_at, so
  // the end of a chat task written before it (a non-blocking send, an early stream id) writes an
  // index entry; a blocking send's task is inserted already ended and writes none.
  indexes: [{ name: "a2a_tasks_agent_updated_idx", properties: ["agent", "updatedAt", "id"] }],
});
export type IA2aTask = InferEntity<typeof A2aTask>;

/**
 * A push notification config given with an A2A message (`configuration.taskPushNotificationConfig`):
 * stored for the outbound delivery engine (DESIGN §17), not delivered yet.
 */
export const A2aPushConfig = defineEntity({
  name: "A2aPushConfig",
  tableName: "a2a_push_configs",
  properties: {
    id: p.string().primary(),
    task: () => p.manyToOne(A2aTask).deleteRule("cascade").index(),
    /** The id the client chose for it (A2A `id`), unique per task; null: the config's own id is shown. */
    clientId: p.string().length(255).nullable(),
    url: p.text(),
    token: p.text().nullable(),
    authentication: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  uniques: [{ name: "a2a_push_configs_task_client_id_unique", properties: ["task", "clientId"] }],
});
export type IA2aPushConfig = InferEntity<typeof A2aPushConfig>;

/**
 * A context id an A2A client chose for a chat agent (one that is not a thread id of the agent):
 * the thread its first message started, which later messages with it continue. Scoped by
 * agent (and so by account): the same id of another agent or account is another thread.
 */
export const A2aContext = defineEntity({
  name: "A2aContext",
  tableName: "a2a_contexts",
  properties: {
    agent: () => p.manyToOne(Agent).deleteRule("cascade").primary(),
    contextId: p.string().length(255).primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    thread: () => p.manyToOne(Thread).deleteRule("cascade").unique(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  primaryKeys: ["agent", "contextId"],
});
export type IA2aContext = InferEntity<typeof A2aContext>;

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

export const LEDGER_KINDS = ["top_up", "initial_balance", "hold", "hold_release", "charge", "refund"] as const;

export const LedgerEntry = defineEntity({
  name: "LedgerEntry",
  tableName: "ledger_entries",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    /** Signed: credits positive, debits negative. The balance equals the sum of this column. */
    amountMicros: p.bigint("number"),
    kind: p.enum(LEDGER_KINDS),
    /** What the entry is for: a chat completion id, a job id, an operator action. */
    reference: p.string().length(100).nullable(),
    // What a model call's rows were for (usage() groups by these). Plain ids, not foreign keys:
    // the money trail outlives deleted agents, keys and threads.
    agentId: p.string().nullable(),
    apiKeyId: p.string().nullable(),
    threadId: p.string().nullable(),
    triggerId: p.string().nullable(),
    jobId: p.string().nullable(),
    model: p.string().length(100).nullable(),
    /** On the row that settles a call (one per call): its tokens; 0 on the others. */
    inputTokens: p.integer().default(0),
    outputTokens: p.integer().default(0),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [
    { properties: ["account", "createdAt"] },
    { name: "ledger_entries_account_id_idx", properties: ["account", "id"] },
    // A thread's rows (per-thread cost), and one call's rows on it: the turn's finish checks its hold is still there (billing/ledger.ts heldCte).
    { name: "ledger_entries_thread_reference_idx", properties: ["threadId", "reference"], where: { threadId: { $ne: null } } },
    { name: "ledger_entries_job_idx", properties: ["jobId"], where: { jobId: { $ne: null } } },
  ],
});
export type ILedgerEntry = InferEntity<typeof LedgerEntry>;

/**
 * What model calls cost, per account, agent, model and UTC hour (billing/usage-rollup.ts): the
 * sums usage() would take over the ledger's call rows of that hour. Kept by a trigger on
 * ledger_entries in the inserting statement's own transaction, so it is never behind the ledger.
 * Agent and model are '' when the call rows had none (a unique key cannot hold nulls as equal).
 */
export const UsageRollup = defineEntity({
  name: "UsageRollup",
  tableName: "usage_rollups",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    /** The hour's start (UTC). */
    bucket: p.datetime(),
    agentId: p.string().default(""),
    model: p.string().length(100).default(""),
    costMicros: p.bigint("number").default(0),
    requests: p.bigint("number").default(0),
    inputTokens: p.bigint("number").default(0),
    outputTokens: p.bigint("number").default(0),
  },
  uniques: [{ name: "usage_rollups_key_unique", properties: ["account", "bucket", "agentId", "model"] }],
});
export type IUsageRollup = InferEntity<typeof UsageRollup>;

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

/**
 * Per-key requests-per-minute windows of the chat API (src/chat/rate-limit.ts): row `key:<keyId>`
 * counts `points` in the window that ends at `expire` (epoch ms). Updated by one upsert per request.
 */
export const RateLimitWindow = defineEntity({
  name: "RateLimitWindow",
  tableName: "chat_rate_limits",
  properties: {
    key: p.string().length(255).primary(),
    points: p.integer().default(0),
    expire: p.bigint("number").nullable(),
  },
});
export type IRateLimitWindow = InferEntity<typeof RateLimitWindow>;

export const entities = [
  Account,
  AdminToken,
  Agent,
  AgentSecret,
  ApiKey,
  ApiKeySpend,
  OAuthModel,
  Thread,
  Message,
  StoredResponse,
  Trigger,
  Schedule,
  ScheduleMissedFiring,
  TriggerSecret,
  TriggerCallbackSecret,
  Job,
  JobStep,
  InputRequest,
  IdempotencyRecord,
  AgentIdempotencyRecord,
  A2aTask,
  A2aPushConfig,
  A2aContext,
  AuditEntry,
  LedgerEntry,
  RateLimitWindow,
  UsageRollup,
  RetentionRun,
  Delivery,
  DeliveryAttempt,
];
