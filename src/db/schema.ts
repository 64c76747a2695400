/**
 * The whole data model, one file per capability that owns its tables (src/db/schema/<area>.ts),
 * re-exported here: the rest of the code imports entities from this module. Money columns are
 * integer micro-USD (`bigint`). Ids are prefixed random strings (see infra/ids.ts), so they can
 * appear in URLs and cannot be enumerated.
 * Hot paths (chat, webhook ingest, billing) use hand-written SQL against these same tables, on the
 * same pool; new hand-written SQL takes table and column names from here via `src/db/names.ts`.
 */
export * from "./schema/accounts.js";
export * from "./schema/agents.js";
export * from "./schema/keys.js";
export * from "./schema/oauth.js";
export * from "./schema/threads.js";
export * from "./schema/chat.js";
export * from "./schema/triggers.js";
export * from "./schema/schedules.js";
export * from "./schema/jobs.js";
export * from "./schema/input-requests.js";
export * from "./schema/outbound.js";
export * from "./schema/webhooks.js";
export * from "./schema/a2a.js";
export * from "./schema/billing.js";

import { Account, AdminToken } from "./schema/accounts.js";
import { Agent, AgentSecret } from "./schema/agents.js";
import { ApiKey } from "./schema/keys.js";
import { OAuthModel } from "./schema/oauth.js";
import { Message, Thread } from "./schema/threads.js";
import { RateLimitWindow, StoredResponse } from "./schema/chat.js";
import { Trigger, TriggerCallbackSecret, TriggerSecret } from "./schema/triggers.js";
import { Schedule, ScheduleMissedFiring } from "./schema/schedules.js";
import { AuditEntry, Job, JobStep, RetentionRun } from "./schema/jobs.js";
import { InputRequest } from "./schema/input-requests.js";
import { Delivery, DeliveryAttempt } from "./schema/outbound.js";
import { AgentIdempotencyRecord, IdempotencyRecord } from "./schema/webhooks.js";
import { A2aContext, A2aPushConfig, A2aTask } from "./schema/a2a.js";
import { ApiKeySpend, LedgerEntry, UsageRollup } from "./schema/billing.js";

/** Every entity, in the order the ORM discovers them. */
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
