// The shapes the console reads from the GraphQL API.

export type JobStatus = "QUEUED" | "RUNNING" | "INPUT_REQUIRED" | "DONE" | "FAILED";
/** The question an INPUT_REQUIRED job waits on (its script called ctx.ask). */
export interface InputRequest {
  id: string;
  prompt: string;
  /** A JSON Schema of an object the answer must match; null: any JSON value. */
  schema: unknown;
  expiresAt: string;
}

export interface Account {
  id: string;
  name: string;
  balance: string;
}
export type SpendLimitPeriod = "DAY" | "MONTH" | "TOTAL";
/** A key's expiry and spend limit as sent; null clears one (never expires, no limit). */
export interface KeyControlsInput {
  expiresAt: string | null;
  spendLimit: string | null;
  spendLimitPeriod: SpendLimitPeriod | null;
}
export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  expiresAt: string | null;
  spendLimit: string | null;
  spendLimitPeriod: SpendLimitPeriod | null;
  spent: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  /** SECRET: an a2a_ key; OAUTH: a connection an OAuth client was allowed (docs/design/oauth.md). */
  kind: "SECRET" | "OAUTH";
  clientName: string | null;
  clientId: string | null;
}
export interface TriggerSummary {
  id: string;
  agentId: string;
  description: string | null;
  active: boolean;
  webhookUrl: string;
  createdAt: string;
  agent?: { id: string; name: string } | null;
}
export interface Agent {
  id: string;
  name: string;
  instructions: string;
  defaultModel: string;
  allowedModels: string[] | null;
  fallbackModels: string[];
  kind: "AUTOMATION" | "CHAT";
  script: string | null;
  /** Built by the server from PUBLIC_BASE_URL. */
  a2aCardUrl: string;
  mcpUrl: string;
  createdAt: string;
  updatedAt: string;
  apiKeys: ApiKey[];
  triggers: TriggerSummary[];
}
export interface LogEntry {
  jobId: string;
  time: string;
  status: JobStatus;
  durationMs: number | null;
  threadId: string | null;
  error: string | null;
}
export interface Trigger extends TriggerSummary {
  secret: string | null;
  secretRequired: boolean;
  callbackUrl: string | null;
  callbackSecret: string | null;
  logs: LogEntry[];
}
/** One attempt to deliver an outbound event (a completion callback, a test event). */
export interface Delivery {
  deliveryId: string;
  webhookId: string;
  attempt: number;
  at: string;
  url: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBytes: number;
  deliveryStatus: "PENDING" | "DELIVERED" | "FAILED";
}
export interface Job {
  id: string;
  status: JobStatus;
  triggerId: string | null;
  agentId: string;
  threadId: string | null;
  result: unknown;
  error: string | null;
  attempts: number;
  cost: string;
  logs: string[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  inputRequest: InputRequest | null;
}
export type ScheduleOverlap = "SKIP" | "BUFFER_ONE" | "ALLOW_ALL";
export interface Schedule {
  id: string;
  agentId: string;
  cron: string | null;
  every: string | null;
  timezone: string;
  paused: boolean;
  description: string | null;
  overlap: ScheduleOverlap;
  payload: unknown;
  createdAt: string;
  nextRunTimes: string[];
  recentJobs: Pick<Job, "id" | "status" | "createdAt">[];
}
export interface Thread {
  id: string;
  agentId: string;
  createdAt: string;
}
export interface ThreadMessage {
  seq: number;
  role: string;
  content: string;
  createdAt: string;
}

/** A Relay connection page (jobs, ledger, threads, messages). */
export interface Page<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export interface JobFilter {
  status?: JobStatus;
  triggerId?: string;
  agentId?: string;
}
export interface JobSummary {
  id: string;
  status: JobStatus;
  triggerId: string | null;
  agentId: string;
  threadId: string | null;
  error: string | null;
  attempts: number;
  cost: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  replayOf: { id: string } | null;
}
export interface JobAudit {
  payload: unknown;
  payloadPurgedAt: string | null;
  result: unknown;
  toolsUsed: { kind: string; name: string; status: string; durationMs: number | null; cost: string }[];
  cost: string;
}

export type UsageDimension = "AGENT" | "API_KEY" | "THREAD" | "TRIGGER" | "MODEL" | "DAY";
export interface UsageRow {
  agentId: string | null;
  apiKeyId: string | null;
  threadId: string | null;
  triggerId: string | null;
  model: string | null;
  day: string | null;
  cost: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
}
export interface LedgerEntry {
  id: string;
  amount: string;
  kind: string;
  reference: string | null;
  agentId: string | null;
  threadId: string | null;
  jobId: string | null;
  model: string | null;
  createdAt: string;
}
export interface AdminToken {
  id: string;
  name: string;
  prefix: string;
  lastUsedAt: string | null;
  createdAt: string;
}

export interface JobStatusEvent {
  jobId: string;
  status: JobStatus;
  error: string | null;
  triggerId: string | null;
  agentId: string;
  at: string;
}
