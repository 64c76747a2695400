import type { Message, SendMessageRequest, Task } from "@a2a-js/sdk";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { newId } from "../infra/ids.js";
import { startAgentJob } from "../agent-jobs/start.js";
import { consumeRateLimit } from "../chat/rate-limit.js";
import { answerJobInput } from "../input-requests/answer.js";
import type { Runtime } from "../runtime/runtime.js";
import { isTerminal, ownTask, rereadTask, type CallState } from "./call.js";
import { startChatTask } from "./chat-task.js";
import { followToEnd } from "./follow.js";
import { jobTaskInput } from "./job-task.js";
import { jobPayload, toTask } from "./mapping.js";
import { answerOnCommit } from "./answer-ahead.js";
import { addPushConfig } from "./push.js";
import { INPUT_REQUIRED, insertJobTask, type TaskRow } from "./store.js";
import { checkMessage } from "./validation.js";

/** A started (or answered) task, and what a chat turn's caller can wait on. */
export interface StartedTask {
  taskId: string;
  row?: TaskRow;
  done?: Promise<TaskRow | undefined>;
  written?: Promise<void>;
  writeNow?: () => Promise<void>;
  ending?: () => boolean;
  finishing?: Promise<void>;
  plannedEnd?: () => TaskRow | undefined;
  endStored?: Promise<boolean>;
  recordWriteBegan?: Promise<void>;
}

/**
 * A message that names a task: the answer to a job task's question (input-required: a data part
 * is the value, text alone `{ "text": … }`), which resumes the job; otherwise refused, since a
 * task takes no more messages once it ended, and a running one none before it ends.
 */
async function followUp(runtime: Runtime, s: CallState, m: Message): Promise<string | undefined> {
  const row = await ownTask(runtime, s, m.taskId);
  if (row.kind === "job" && row.state === INPUT_REQUIRED) {
    await answerJobInput(runtime, s.principal.agent.accountId, row.id, jobPayload(m));
    return row.id;
  }
  if (isTerminal(row)) throw new UnsupportedOperationError(`Task ${m.taskId} is ${row.state}: it takes no more messages; send a new message with contextId ${row.contextId}`);
  throw new UnsupportedOperationError(`Task ${m.taskId} is still ${row.state}; wait for it to end, then send a new message with contextId ${row.contextId}`);
}

async function keepPushConfig(runtime: Runtime, s: CallState, params: SendMessageRequest, taskId: string): Promise<void> {
  const c = params.configuration?.taskPushNotificationConfig;
  if (!c?.url) return;
  await addPushConfig(runtime, s.principal.agent.accountId, await ownTask(runtime, s, taskId), c, "configuration.taskPushNotificationConfig.url");
}

/** Starts the task of a message: a chat turn or a job. */
export async function startTask(runtime: Runtime, s: CallState, params: SendMessageRequest, onDelta?: (text: string) => void): Promise<StartedTask> {
  // A push config refers to the task's record: it is written before the config is kept.
  const record = params.configuration?.returnImmediately || params.configuration?.taskPushNotificationConfig?.url ? "open" : onDelta !== undefined ? "alongside" : "finish";
  const m = checkMessage(params);
  // No wait for a message that names no task: a chat turn's open leaves before anything else runs.
  const answered = m.taskId ? await followUp(runtime, s, m) : undefined;
  if (answered) {
    await keepPushConfig(runtime, s, params, answered);
    return { taskId: answered };
  }
  const { principal } = s;
  if (!principal.automation) {
    const t = await startChatTask(runtime, principal, m, { onRateLimit: s.onRateLimit, onDelta, record });
    await keepPushConfig(runtime, s, params, t.taskId);
    return t;
  }
  // Checked before the job starts (it runs and bills once started), counted like MCP's `run`.
  const input = jobTaskInput(m);
  await consumeRateLimit(runtime.pool, principal.keyId, principal.rateLimitPerMinute, s.onRateLimit);
  const { accountId, id: agentId } = principal.agent;
  const job = await startAgentJob(runtime, { accountId, agentId, source: "a2a", payloadText: input.payloadText, idempotencyKey: m.messageId });
  await insertJobTask(runtime.pool, { jobId: job.jobId, accountId, agentId, contextId: input.contextId ?? newId("ctx"), request: input.request });
  if (job.created) await keepPushConfig(runtime, s, params, job.jobId);
  return { taskId: job.jobId };
}

/** SendMessage: the task at its end, or as it stands after the blocking wait (or at once when asked). */
export async function sendMessage(runtime: Runtime, s: CallState, params: SendMessageRequest): Promise<Task> {
  const started = await startTask(runtime, s, params);
  const { taskId, done, writeNow } = started;
  const view = { historyLength: params.configuration?.historyLength };
  if (params.configuration?.returnImmediately) return rereadTask(runtime, s, taskId, view);
  const waitMs = runtime.config.a2aBlockingWaitMs;
  if (done) {
    const taskView = { ...view, user: params.message };
    const prepared = s.ahead ? answerOnCommit(s.ahead, started, taskView) : undefined;
    // The end this process wrote is the task as stored: no need to read it back.
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([done, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), waitMs).unref()))]).finally(() => clearTimeout(timer));
    if (ended) return prepared?.(ended) ?? toTask(ended, taskView);
    // Still running (it will be billed): its record is written now, working, so the answer
    // names a task the client can get or subscribe to instead of sending (and paying) again.
    await writeNow?.();
  } else {
    const row = await ownTask(runtime, s, taskId);
    if (!isTerminal(row) && row.state !== INPUT_REQUIRED) await followToEnd(runtime, s, row, new Date(Date.now() + waitMs), new AbortController().signal);
  }
  return rereadTask(runtime, s, taskId, view);
}
