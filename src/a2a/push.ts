import { StreamResponse, TaskState, type TaskPushNotificationConfig } from "@a2a-js/sdk";
import type { Runtime } from "../runtime/runtime.js";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { validateCallbackUrl } from "../outbound/target.js";
import { toTask } from "./mapping.js";
import { checkClientId } from "./validation.js";
import { insertPushConfig, type PushConfigRow } from "./push-config-store.js";
import { findTaskById, type TaskRow } from "./store.js";

/**
 * A2A push notifications (specification §4.3, §13.2) on the outbound delivery engine: a task's
 * state changes are recorded as deliveries with the change (outbound/store.ts), and each POST's
 * body is built here, as the A2A v1.0 HTTP+JSON `StreamResponse`: `statusUpdate` for WORKING,
 * the whole `task` (final status and artifacts in one event, so no ordering between two POSTs
 * matters) for COMPLETED, FAILED and CANCELED.
 */

export const A2A_CONTENT_TYPE = "application/a2a+json";
/** The token header of a2a-js's push sender (and the A2A samples). */
export const TOKEN_HEADER = "X-A2A-Notification-Token";

const STATE: Record<string, TaskState> = { working: TaskState.TASK_STATE_WORKING };

/** The body of one push, or null when the task is gone. */
export async function a2aPushBody(runtime: Runtime, taskId: string, event: string, at: Date): Promise<string | null> {
  const row = await findTaskById(runtime.pool, taskId);
  if (!row) return null;
  const task = toTask(row);
  const sr: StreamResponse =
    event in STATE
      ? { payload: { $case: "statusUpdate", value: { taskId: task.id, contextId: task.contextId, status: { state: STATE[event]!, message: undefined, timestamp: at.toISOString() }, metadata: undefined } } }
      : { payload: { $case: "task", value: task } };
  return JSON.stringify(StreamResponse.toJSON(sr));
}

/** The push's own headers: the config's token and its authentication (`Authorization: <scheme> <credentials>`). */
export function a2aPushHeaders(token: string | null, authentication: PushConfigRow["authentication"]): Record<string, string> {
  const headers: Record<string, string> = { "content-type": A2A_CONTENT_TYPE };
  if (token) headers[TOKEN_HEADER.toLowerCase()] = token;
  if (authentication?.scheme && authentication.credentials) headers.authorization = `${authentication.scheme} ${authentication.credentials}`;
  return headers;
}

const MAX_HEADER_CHARS = 4096;
/** What an HTTP header value may hold (Node refuses the rest when the push is sent); an auth scheme is an RFC 9110 token. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A token, scheme or credentials, sent as a header of every push: refused now rather than failing every attempt. */
function headerPart(v: unknown, param: string, shape = HEADER_VALUE): string {
  if (typeof v !== "string") throw new AppError("validation_failed", `${param} must be a string`, { param });
  if (v.length > MAX_HEADER_CHARS) throw new AppError("validation_failed", `${param}: at most ${MAX_HEADER_CHARS} characters`, { param });
  if (!shape.test(v)) throw new AppError("validation_failed", `${param}: characters an HTTP header cannot carry`, { param });
  return v;
}

/**
 * Keeps a push config of a task, its URL held to the egress rules (`param` names the field), and
 * records the event of the state the task is already in, in one statement with the config (a task
 * that moved on before its config was stored still notifies it; push-config-store.ts `insertPushConfig`).
 * A task keeps at most `A2A_PUSH_CONFIGS_PER_TASK` configs: each one is an outbound target.
 */
export async function addPushConfig(runtime: Runtime, accountId: string, task: TaskRow, c: Pick<TaskPushNotificationConfig, "id" | "url" | "token" | "authentication">, param: string): Promise<string> {
  // v0.3 calls reach here as sent (the v1.0 decoding makes strings of what it reads).
  if (typeof c.url !== "string") throw new AppError("validation_failed", `${param} must be a string`, { param });
  const url = validateCallbackUrl(c.url, runtime.config.egress, param);
  const at = param.replace(/url$/, "");
  const authentication = c.authentication?.scheme
    ? { scheme: headerPart(c.authentication.scheme, `${at}authentication.scheme`, SCHEME), credentials: headerPart(c.authentication.credentials ?? "", `${at}authentication.credentials`) }
    : null;
  const token = headerPart(c.token ?? "", `${at}token`);
  const clientId = c.id ? checkClientId(c.id, `${at}id`, "pnc_") : null;
  const cap = runtime.config.a2a.pushConfigsPerTask;
  const r = await insertPushConfig(runtime.pool, accountId, task.id, { clientId, url, token: token || null, authentication }, cap);
  if (r.created) return r.id;
  if (r.existing === null) throw new TaskNotFoundError(`Task ${task.id} not found`);
  if (r.taken) throw new AppError("validation_failed", `Task ${task.id} already has a push notification config with id ${clientId}; delete it first (DeleteTaskPushNotificationConfig)`, { param: `${at}id` });
  throw new AppError("validation_failed", `Task ${task.id} already has ${r.existing} push notification configs, the most a task may have (A2A_PUSH_CONFIGS_PER_TASK = ${cap}); delete one first (DeleteTaskPushNotificationConfig)`, {
    param: "taskId",
    details: { limit: cap },
  });
}
