import type { CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, Task } from "@a2a-js/sdk";
import { TaskNotCancelableError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { encodeCursor } from "../graphql/cursor.js";
import { cancelJob } from "../jobs/control.js";
import type { Runtime } from "../runtime/runtime.js";
import { isTerminal, ownTask, rereadTask, type CallState } from "./call.js";
import { cancelChatTask } from "./chat-task.js";
import { followToEnd } from "./follow.js";
import { stateName, toTask } from "./mapping.js";
import { checkPageSize, pagePosition } from "./paging.js";
import { listTasks as listTaskRows } from "./store.js";
import { checkHistoryLength, parseTimestamp } from "./validation.js";

export async function getTask(runtime: Runtime, s: CallState, params: GetTaskRequest): Promise<Task> {
  checkHistoryLength(params.historyLength);
  return rereadTask(runtime, s, params.id, { historyLength: params.historyLength });
}

export async function listTasks(runtime: Runtime, s: CallState, params: ListTasksRequest): Promise<ListTasksResponse> {
  const size = params.pageSize ?? 50;
  checkPageSize(size);
  const before = pagePosition(params.pageToken);
  const state = params.status ? stateName(params.status) : undefined;
  if (params.status && !state) throw new AppError("validation_failed", "status is not a task state this agent uses", { param: "status" });
  checkHistoryLength(params.historyLength);
  const statusAfter = parseTimestamp(params.statusTimestampAfter, "statusTimestampAfter");
  const { accountId, id: agentId } = s.principal.agent;
  const { rows, total } = await listTaskRows(runtime.pool, accountId, agentId, { contextId: params.contextId || undefined, state, statusAfter, before }, size + 1);
  const page = rows.slice(0, size);
  const last = page.at(-1);
  return {
    tasks: page.map((r) => toTask(r, { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts === true })),
    nextPageToken: rows.length > size && last ? encodeCursor([Number(last.cursorUs), last.id]) : "",
    pageSize: size,
    totalSize: total,
  };
}

/** How long CancelTask waits for a chat turn to stop (on any instance) before it says it could not. */
const CANCEL_WAIT_MS = 10_000;

export async function cancelTask(runtime: Runtime, s: CallState, params: CancelTaskRequest): Promise<Task> {
  const row = await ownTask(runtime, s, params.id);
  if (isTerminal(row)) throw new TaskNotCancelableError(`Task ${row.id} is already ${row.state}`);
  if (row.kind === "job") {
    try {
      await cancelJob(runtime, s.principal.agent.accountId, row.id);
    } catch (err) {
      if (err instanceof AppError && err.code === "job_finished") throw new TaskNotCancelableError(`Task ${row.id} has already ended`);
      throw err;
    }
    return rereadTask(runtime, s, row.id);
  }
  // A chat turn is stopped by the instance that runs it: this one, or the one told to.
  await cancelChatTask(runtime, row.id);
  await followToEnd(runtime, s, row, new Date(Date.now() + CANCEL_WAIT_MS), new AbortController().signal, () => {});
  const after = await ownTask(runtime, s, row.id);
  // No instance stopped it: the one that ran it is gone, and its turn's lease has not run out yet.
  if (!isTerminal(after)) throw new TaskNotCancelableError(`Task ${row.id} is a chat turn no running instance stopped; it reads as failed once its turn's lease runs out`);
  return toTask(after);
}
