import type { SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from "@a2a-js/sdk";
import type { ServerCallContext } from "@a2a-js/sdk/server";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import type { Runtime } from "../runtime/runtime.js";
import { callState, isTerminal, noteFailure, ownTask, type CallState } from "./call.js";
import { EventQueue } from "./event-queue.js";
import { followToEnd } from "./follow.js";
import { answerArtifact, taskStatus, toTask } from "./mapping.js";
import { startTask } from "./send.js";
import { findTask, type TaskRow } from "./store.js";
import type { StreamSlots } from "./stream-slots.js";

/** A stream on a task closes after this long without the end (the client subscribes again). */
const STREAM_MAX_MS = 3_600_000;

type Push = (e: StreamResponse) => void;

const statusEvent = (task: Pick<Task, "id" | "contextId" | "status">): StreamResponse => ({ payload: { $case: "statusUpdate", value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined } } });
const taskEvent = (task: Task): StreamResponse => ({ payload: { $case: "task", value: task } });

/**
 * An SSE stream as an async generator; errors before the first event reach the route as errors.
 * A stream that follows a task (`followsTask`) holds one of its key's slots while it is open.
 */
export function streamEvents(
  context: ServerCallContext,
  slots: StreamSlots,
  followsTask: (s: CallState) => boolean,
  body: (s: CallState, push: Push, signal: AbortSignal) => Promise<void>,
): AsyncGenerator<StreamResponse, void, undefined> {
  const s = callState(context);
  s.entered = true;
  const events = new EventQueue<StreamResponse>();
  const push = (e: StreamResponse) => events.push(e);
  s.left?.addEventListener("abort", () => void events.return(), { once: true });
  const run = async () => {
    const release = followsTask(s) ? slots.take(s.principal.keyId) : undefined;
    try {
      await body(s, push, events.signal);
    } finally {
      release?.();
    }
  };
  run().then(
    () => events.end(),
    (err: unknown) => events.end({ err: noteFailure(s, err) }),
  );
  return events;
}

/** SendStreamingMessage: the task, the answer's chunks as they come, the status updates, the end. */
export async function streamMessage(runtime: Runtime, s: CallState, params: SendMessageRequest, push: Push, signal: AbortSignal): Promise<void> {
  let chunks = 0;
  let current: Task | undefined;
  // The deltas of one event-loop turn (one upstream read) leave as one artifactUpdate: a
  // client sees the same text at the same time, in fewer events; deltas of separate reads
  // stay separate events. Those before the Task event wait for it; those read with the
  // turn's end leave with it, as the last chunk (they would leave with it anyway).
  let pending = "";
  let ending = () => false;
  const flush = () => {
    if (!pending || !current || ending()) return;
    const text = pending;
    pending = "";
    push({
      payload: {
        $case: "artifactUpdate",
        value: { taskId: current.id, contextId: current.contextId, artifact: answerArtifact(text), append: chunks++ > 0, lastChunk: false, metadata: undefined },
      },
    });
  };
  const onDelta = (text: string) => {
    if (!pending && current) setImmediate(flush);
    pending += text;
  };
  const { taskId, row: started, done, written, ending: turnEnding } = await startTask(runtime, s, params, onDelta);
  if (turnEnding) ending = turnEnding;
  const row = started ?? (await ownTask(runtime, s, taskId));
  current = toTask(row, { historyLength: params.configuration?.historyLength, user: params.message });
  // The events (the first names the task) leave once its record is durable.
  s.eventsWaitFor = written;
  push(taskEvent(current));
  flush();
  await written;
  await streamToEnd(runtime, s, row, push, signal, done, () => {
    const rest = pending;
    pending = "";
    return { rest, chunks };
  });
}

/** SubscribeToTask: the task as it stands, then its status updates and its end. */
export async function streamResubscribe(runtime: Runtime, s: CallState, params: SubscribeToTaskRequest, push: Push, signal: AbortSignal): Promise<void> {
  const row = await ownTask(runtime, s, params.id);
  if (isTerminal(row)) throw new UnsupportedOperationError(`Task ${row.id} is ${row.state}: there is nothing left to subscribe to (use GetTask)`);
  push(taskEvent(toTask(row)));
  await streamToEnd(runtime, s, row, push, signal, undefined, () => ({ rest: "", chunks: 0 }));
}

/**
 * Status updates until the end; then the artifact's last chunk (the text not sent yet, or the
 * whole artifact when none was streamed) and the final status. `unsent`: the streamed text not
 * sent yet, and how many chunks were.
 */
async function streamToEnd(runtime: Runtime, s: CallState, row: TaskRow, push: Push, signal: AbortSignal, done: Promise<TaskRow | undefined> | undefined, unsent: () => { rest: string; chunks: number }): Promise<void> {
  let last: TaskRow | undefined;
  if (done) {
    last = await Promise.race([done, new Promise<undefined>((r) => signal.addEventListener("abort", () => r(undefined), { once: true }))]);
    last ??= await findTask(runtime.pool, s.principal.agent.accountId, s.principal.agent.id, row.id);
  } else {
    await followToEnd(runtime, s, row, new Date(Date.now() + STREAM_MAX_MS), signal, async (now) => {
      last = now;
      if (!isTerminal(now)) push(statusEvent(toTask(now)));
    });
  }
  if (!last || !isTerminal(last) || signal.aborted) return;
  // A chat task's artifact is its answer; a job's, its result.
  const { rest, chunks } = unsent();
  const a = last.kind !== "chat" ? toTask(last).artifacts[0] : chunks > 0 || rest ? answerArtifact(rest) : last.answer === null ? undefined : answerArtifact(last.answer);
  if (a) push({ payload: { $case: "artifactUpdate", value: { taskId: last.id, contextId: last.contextId, artifact: a, append: chunks > 0, lastChunk: true, metadata: undefined } } });
  push(statusEvent({ id: last.id, contextId: last.contextId, status: taskStatus(last) }));
}
