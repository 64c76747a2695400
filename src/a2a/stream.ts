import { setImmediate as nextTurn } from "node:timers/promises";
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
  s.pushed = 0;
  const push = (e: StreamResponse) => {
    s.pushed!++;
    events.push(e);
  };
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
  const { taskId, row: started, done, written, ending: turnEnding, finishing, plannedEnd, endStored, recordWriteBegan } = await startTask(runtime, s, params, onDelta);
  if (turnEnding) ending = turnEnding;
  // Nothing leaves before the task's record is durable: the events are built once a statement that
  // writes it is on its way (in the next turn of the event loop, once it has left), so the work
  // overlaps that statement's wait instead of delaying the upstream's answer or the finish.
  if (recordWriteBegan && done) {
    await Promise.race([recordWriteBegan, done]);
    await nextTurn();
  }
  const row = started ?? (await ownTask(runtime, s, taskId));
  current = toTask(row, { historyLength: params.configuration?.historyLength, user: params.message });
  // The events (the first names the task) leave once its record is durable.
  s.eventsWaitFor = written;
  push(taskEvent(current));
  flush();
  const unsent = () => {
    const rest = pending;
    pending = "";
    return { rest, chunks };
  };
  // The end's events are built (and formatted by the route) while the finish statement that stores
  // the end runs, not after its commit: they wait for its outcome, and are dropped for the end as
  // stored if it failed or refused (`ahead`, read by streamToEnd). Built at once when that
  // statement is out already, else in the turn after it leaves.
  let ahead: EndAhead | undefined;
  let ended = false;
  const sendEndAhead = () => {
    const end = plannedEnd?.();
    if (ended || !end || !endStored || signal.aborted) return;
    ahead = { stored: endStored, unsent: unsent() };
    const from = s.pushed!;
    const events = endEvents(end, ahead.unsent);
    s.endHeld = { from, to: from + events.length, until: endStored };
    for (const e of events) push(e);
  };
  if (plannedEnd?.()) sendEndAhead();
  else void finishing?.then(() => setImmediate(sendEndAhead));
  await written;
  await streamToEnd(runtime, s, row, push, signal, done, () => {
    ended = true;
    return ahead ?? { unsent: unsent() };
  });
}

/** The end's events sent ahead of its commit (streamMessage): whether they passed, and the streamed text they carry. */
interface EndAhead {
  stored: Promise<boolean>;
  unsent: Unsent;
}

/** The streamed text not sent yet, and how many chunks were. */
type Unsent = { rest: string; chunks: number };

/** SubscribeToTask: the task as it stands, then its status updates and its end. */
export async function streamResubscribe(runtime: Runtime, s: CallState, params: SubscribeToTaskRequest, push: Push, signal: AbortSignal): Promise<void> {
  const row = await ownTask(runtime, s, params.id);
  if (isTerminal(row)) throw new UnsupportedOperationError(`Task ${row.id} is ${row.state}: there is nothing left to subscribe to (use GetTask)`);
  push(taskEvent(toTask(row)));
  await streamToEnd(runtime, s, row, push, signal, undefined, () => ({ unsent: { rest: "", chunks: 0 } }));
}

/**
 * Status updates until the end; then the end's events (endEvents), unless they were sent ahead
 * and passed (the statement that stored that end committed). `atEnd`: the end sent ahead, if any,
 * and the streamed text not sent yet.
 */
async function streamToEnd(runtime: Runtime, s: CallState, row: TaskRow, push: Push, signal: AbortSignal, done: Promise<TaskRow | undefined> | undefined, atEnd: () => { stored?: Promise<boolean>; unsent: Unsent }): Promise<void> {
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
  const { stored, unsent } = atEnd();
  if (!last || !isTerminal(last) || signal.aborted || (stored && (await stored))) return;
  for (const e of endEvents(last, unsent)) push(e);
}

/**
 * A task's end as events: the artifact's last chunk (the text not sent yet, or the whole artifact
 * when none was streamed) and the final status.
 */
function endEvents(last: TaskRow, { rest, chunks }: Unsent): StreamResponse[] {
  // A chat task's artifact is its answer; a job's, its result.
  const a = last.kind !== "chat" ? toTask(last).artifacts[0] : chunks > 0 || rest ? answerArtifact(rest) : last.answer === null ? undefined : answerArtifact(last.answer);
  const status = statusEvent({ id: last.id, contextId: last.contextId, status: taskStatus(last) });
  return a ? [{ payload: { $case: "artifactUpdate", value: { taskId: last.id, contextId: last.contextId, artifact: a, append: chunks > 0, lastChunk: true, metadata: undefined } } }, status] : [status];
}
