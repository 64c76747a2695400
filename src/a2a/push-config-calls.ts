import type {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { encodeCursor } from "../graphql/cursor.js";
import { consumeRateLimit } from "../chat/rate-limit.js";
import type { Runtime } from "../runtime/runtime.js";
import { ownTask, type CallState } from "./call.js";
import { addPushConfig } from "./push.js";
import { deletePushConfig, findPushConfig, listPushConfigs, type PushConfigRow } from "./push-config-store.js";
import { checkPageSize, MAX_PAGE, pagePosition } from "./paging.js";

// Push notification configs (A2A §3.1.7–3.1.10): stored per task, delivered by the outbound engine (push.ts).
// Each call counts in the key's rate-limit window, as a chat request does: creates are outbound targets.

const pushConfigOf = (c: PushConfigRow): TaskPushNotificationConfig => ({
  tenant: "",
  id: c.id,
  taskId: c.taskId,
  url: c.url,
  token: c.token ?? "",
  authentication: c.authentication?.scheme ? { scheme: c.authentication.scheme, credentials: c.authentication.credentials ?? "" } : undefined,
});

function countCall(runtime: Runtime, s: CallState): Promise<unknown> {
  return consumeRateLimit(runtime.pool, s.principal.keyId, s.principal.rateLimitPerMinute, s.onRateLimit);
}

export async function createPushConfig(runtime: Runtime, s: CallState, params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
  await countCall(runtime, s);
  const task = await ownTask(runtime, s, params.taskId);
  if (!params.url) throw new AppError("validation_failed", "url is required", { param: "url" });
  const id = await addPushConfig(runtime, s.principal.agent.accountId, task, params, "url");
  return pushConfigOf((await findPushConfig(runtime.pool, task.id, id))!);
}

export async function getPushConfig(runtime: Runtime, s: CallState, params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
  await countCall(runtime, s);
  const task = await ownTask(runtime, s, params.taskId);
  const c = await findPushConfig(runtime.pool, task.id, params.id);
  if (!c) throw new TaskNotFoundError(`Push notification config ${params.id} of task ${task.id} not found`);
  return pushConfigOf(c);
}

export async function listPushConfigPage(runtime: Runtime, s: CallState, params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
  await countCall(runtime, s);
  // pageSize 0 is proto3's "unset".
  const size = params.pageSize || MAX_PAGE;
  checkPageSize(size);
  const after = pagePosition(params.pageToken);
  const task = await ownTask(runtime, s, params.taskId);
  const rows = await listPushConfigs(runtime.pool, task.id, size + 1, after);
  const page = rows.slice(0, size);
  const last = page.at(-1);
  return { configs: page.map(pushConfigOf), nextPageToken: rows.length > size && last ? encodeCursor([Number(last.cursorUs), last.rowId]) : "" };
}

export async function removePushConfig(runtime: Runtime, s: CallState, params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
  await countCall(runtime, s);
  const task = await ownTask(runtime, s, params.taskId);
  await deletePushConfig(runtime.pool, task.id, params.id);
}
