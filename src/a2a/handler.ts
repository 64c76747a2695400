import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";

import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { findPublicAgent } from "../agents/agent-info.js";
import { unavailableError } from "../errors/unavailable.js";
import { unstorableTextError } from "../errors/unstorable.js";
import { decodeCursor, encodeCursor } from "../graphql/cursor.js";
import { newId } from "../infra/ids.js";
import { startAgentJob } from "../agent-jobs/start.js";
import { cancelJob } from "../jobs/control.js";
import { waitForJob } from "../jobs/wait.js";
import type { KeyPrincipal } from "../keys/auth.js";
import { consumeRateLimit, type RateLimitState } from "../chat/rate-limit.js";
import type { Runtime } from "../runtime/runtime.js";
import { cancelLocalChatTask, startChatTask } from "./chat-task.js";
import { answerArtifact, jobPayload, stateName, taskStatus, toTask, type TaskView } from "./mapping.js";
import { jobTaskInput } from "./job-task.js";
import { checkHistoryLength, checkMessage, parseTimestamp } from "./validation.js";
import { EventQueue } from "./event-queue.js";
import { extendedCard } from "./extended-card.js";
import { StreamSlots } from "./stream-slots.js";
import { addPushConfig } from "./push.js";
import { A2A_TASK_CHANNEL, deletePushConfig, findPushConfig, findTask, followTask, INPUT_REQUIRED, insertJobTask, listPushConfigs, listTasks, TERMINAL_STATES, type PushConfigRow, type TaskRow } from "./store.js";
import { answerJobInput } from "../input-requests/answer.js";

/** What the route hands the handler with each request (in the SDK's per-request context). */
export interface CallState {
  principal: KeyPrincipal;
  onRateLimit: (s: RateLimitState) => void;
  /** Set when the call failed with an AppError, so the route answers with its status and code. */
  failure?: AppError;
  /** Set once the SDK has parsed the request and handed it to this handler. */
  entered?: boolean;
  /** A stream's events wait for this (the first names a task whose record is not yet durable). */
  eventsWaitFor?: Promise<void>;
  /**
   * Aborted when the client goes away before the answer's end. A stream stops following its task
   * then, even while no event is due: the SDK's generator around ours would pass the client's
   * leaving on only with the next event, and the stream would hold its key's slot until then.
   */
  left?: AbortSignal;
}
export const CALL_STATE = "agw";

/** A stream on a task closes after this long without the end (the client subscribes again). */
const STREAM_MAX_MS = 3_600_000;
const CHAT_POLL_MS = 5_000;
const MAX_PAGE = 100;

const isTerminal = (row: TaskRow) => TERMINAL_STATES.includes(row.state);
const statusEvent = (task: Pick<Task, "id" | "contextId" | "status">): StreamResponse => ({ payload: { $case: "statusUpdate", value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined } } });
const pushConfigOf = (c: PushConfigRow): TaskPushNotificationConfig => ({
  tenant: "",
  id: c.id,
  taskId: c.taskId,
  url: c.url,
  token: c.token ?? "",
  authentication: c.authentication?.scheme ? { scheme: c.authentication.scheme, credentials: c.authentication.credentials ?? "" } : undefined,
});
const taskEvent = (task: Task): StreamResponse => ({ payload: { $case: "task", value: task } });

/**
 * Notes a gateway error for the route (the SDK would report it as an internal error). Text
 * PostgreSQL cannot store and a database outage are the same 400 / 503 as on every other route.
 */
function noteFailure(s: CallState, err: unknown): unknown {
  const known = err instanceof AppError ? err : (unstorableTextError(err) ?? unavailableError(err));
  if (known) s.failure = known;
  return known ?? err;
}

function callState(context: ServerCallContext): CallState {
  const s = context.state.get(CALL_STATE) as CallState | undefined;
  if (!s) throw new Error("A2A call without its call state");
  return s;
}

export class GatewayA2AHandler implements A2ARequestHandler {
  private readonly streamSlots: StreamSlots;

  constructor(
    private readonly runtime: Runtime,
    /** The card as the SDK's transports read it (versions, capabilities). */
    private readonly card: () => Promise<AgentCard>,
  ) {
    this.streamSlots = new StreamSlots(runtime.config.a2aMaxStreamsPerKey);
  }

  getAgentCard(): Promise<AgentCard> {
    return this.card();
  }

  /** The key's agent's card with its models and limits (extended-card.ts); the key was checked fresh. */
  async getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    return this.guard(context, async (s) => {
      const agent = await findPublicAgent(this.runtime.pool, s.principal.agent.id);
      if (!agent) throw new AppError("not_found", "Agent not found");
      return extendedCard(agent, s.principal, this.runtime.config.publicBaseUrl, this.runtime.config);
    });
  }

  /** Runs a call, noting an AppError for the route (the SDK would report it as an internal error). */
  private async guard<T>(context: ServerCallContext, fn: (s: CallState) => Promise<T>): Promise<T> {
    const s = callState(context);
    s.entered = true;
    try {
      return await fn(s);
    } catch (err) {
      throw noteFailure(s, err);
    }
  }

  private async task(s: CallState, id: string): Promise<TaskRow> {
    const row = id ? await findTask(this.runtime.pool, s.principal.agent.accountId, s.principal.agent.id, id) : undefined;
    if (!row) throw new TaskNotFoundError(`Task ${id} not found`);
    return row;
  }

  private async reread(s: CallState, id: string, view: TaskView = {}): Promise<Task> {
    return toTask(await this.task(s, id), view);
  }

  /**
   * A message that names a task: the answer to a job task's question (input-required: a data part
   * is the value, text alone `{ "text": … }`), which resumes the job; otherwise refused, since a
   * task takes no more messages once it ended, and a running one none before it ends.
   */
  private async followUp(s: CallState, m: Message): Promise<string | undefined> {
    if (!m.taskId) return undefined;
    const row = await this.task(s, m.taskId);
    if (row.kind === "job" && row.state === INPUT_REQUIRED) {
      await answerJobInput(this.runtime, s.principal.agent.accountId, row.id, jobPayload(m));
      return row.id;
    }
    if (isTerminal(row)) throw new UnsupportedOperationError(`Task ${m.taskId} is ${row.state}: it takes no more messages; send a new message with contextId ${row.contextId}`);
    throw new UnsupportedOperationError(`Task ${m.taskId} is still ${row.state}; wait for it to end, then send a new message with contextId ${row.contextId}`);
  }

  private async keepPushConfig(s: CallState, params: SendMessageRequest, taskId: string): Promise<void> {
    const c = params.configuration?.taskPushNotificationConfig;
    if (!c?.url) return;
    await addPushConfig(this.runtime, s.principal.agent.accountId, await this.task(s, taskId), c, "configuration.taskPushNotificationConfig.url");
  }

  /** Starts the task of a message: a chat turn or a job. */
  private async start(
    s: CallState,
    params: SendMessageRequest,
    onDelta?: (text: string) => void,
  ): Promise<{ taskId: string; row?: TaskRow; done?: Promise<TaskRow | undefined>; written?: Promise<void>; writeNow?: () => Promise<void>; ending?: () => boolean }> {
    // A push config refers to the task's record: it is written before the config is kept.
    const record = params.configuration?.returnImmediately || params.configuration?.taskPushNotificationConfig?.url ? "open" : onDelta !== undefined ? "alongside" : "finish";
    const m = checkMessage(params);
    const answered = await this.followUp(s, m);
    if (answered) {
      await this.keepPushConfig(s, params, answered);
      return { taskId: answered };
    }
    const { principal } = s;
    if (!principal.automation) {
      const t = await startChatTask(this.runtime, principal, m, { onRateLimit: s.onRateLimit, onDelta, record });
      await this.keepPushConfig(s, params, t.taskId);
      return { taskId: t.taskId, row: t.row, done: t.done, written: t.written, writeNow: t.writeNow, ending: t.ending };
    }
    // Checked before the job starts (it runs and bills once started), counted like MCP's `run`.
    const input = jobTaskInput(m);
    await consumeRateLimit(this.runtime.pool, principal.keyId, principal.rateLimitPerMinute, s.onRateLimit);
    const { accountId, id: agentId } = principal.agent;
    const job = await startAgentJob(this.runtime, { accountId, agentId, source: "a2a", payloadText: input.payloadText, idempotencyKey: m.messageId });
    await insertJobTask(this.runtime.pool, { jobId: job.jobId, accountId, agentId, contextId: input.contextId ?? newId("ctx"), request: input.request });
    if (job.created) await this.keepPushConfig(s, params, job.jobId);
    return { taskId: job.jobId };
  }

  /** Waits for a task's end (or the deadline / the signal), telling `onState` each state seen. */
  private async follow(s: CallState, row: TaskRow, until: Date, signal: AbortSignal, onState?: (row: TaskRow) => void | Promise<void>): Promise<void> {
    const { accountId, id: agentId } = s.principal.agent;
    if (row.kind === "job") {
      let last = row.state;
      // A question the job comes to interrupts the task: the wait ends there, as at its end.
      const interrupted = new AbortController();
      const stop = () => interrupted.abort();
      signal.addEventListener("abort", stop, { once: true });
      try {
        await waitForJob(this.runtime, accountId, row.id, {
          until,
          signal: interrupted.signal,
          onStatus: async () => {
            const now = await findTask(this.runtime.pool, accountId, agentId, row.id);
            if (now && now.state !== last) {
              last = now.state;
              await onState?.(now);
              if (now.state === INPUT_REQUIRED) interrupted.abort();
            }
          },
        });
      } finally {
        signal.removeEventListener("abort", stop);
      }
      return;
    }
    // A chat task: its end is NOTIFYed; a slow poll also catches an interrupted turn.
    let wake!: () => void;
    let woken = new Promise<void>((r) => (wake = r));
    const off = await this.runtime.events.subscribe(A2A_TASK_CHANNEL, (payload) => {
      if (payload.includes(`"${row.id}"`)) wake();
    });
    const timer = setInterval(() => wake(), CHAT_POLL_MS);
    const stop = () => wake();
    signal.addEventListener("abort", stop, { once: true });
    try {
      // Only a followed task's end is NOTIFYed; marked after the LISTEN, before the first read.
      await followTask(this.runtime.pool, row.id);
      while (!signal.aborted && Date.now() < until.getTime()) {
        const now = await findTask(this.runtime.pool, accountId, agentId, row.id);
        if (!now) return;
        if (now.state !== row.state || isTerminal(now)) {
          await onState?.(now);
          if (isTerminal(now)) return;
        }
        await woken;
        woken = new Promise<void>((r) => (wake = r));
      }
    } finally {
      off();
      clearInterval(timer);
      signal.removeEventListener("abort", stop);
    }
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(context, async (s) => {
      const { taskId, done, writeNow } = await this.start(s, params);
      const view = { historyLength: params.configuration?.historyLength };
      if (params.configuration?.returnImmediately) return this.reread(s, taskId, view);
      const waitMs = this.runtime.config.a2aBlockingWaitMs;
      if (done) {
        // The end this process wrote is the task as stored: no need to read it back.
        let timer: NodeJS.Timeout | undefined;
        const ended = await Promise.race([done, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), waitMs).unref()))]).finally(() => clearTimeout(timer));
        if (ended) return toTask(ended, { ...view, user: params.message });
        // Still running (it will be billed): its record is written now, working, so the answer
        // names a task the client can get or subscribe to instead of sending (and paying) again.
        await writeNow?.();
      } else {
        const row = await this.task(s, taskId);
        if (!isTerminal(row) && row.state !== INPUT_REQUIRED) await this.follow(s, row, new Date(Date.now() + waitMs), new AbortController().signal);
      }
      return this.reread(s, taskId, view);
    });
  }

  sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    // A chat turn's stream ends with its turn; an automation agent's follows its job (up to an hour).
    return this.stream(context, (s) => s.principal.automation, async (s, push, signal) => {
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
      const { taskId, row: started, done, written, ending: turnEnding } = await this.start(s, params, onDelta);
      if (turnEnding) ending = turnEnding;
      const row = started ?? (await this.task(s, taskId));
      current = toTask(row, { historyLength: params.configuration?.historyLength, user: params.message });
      // The events (the first names the task) leave once its record is durable.
      s.eventsWaitFor = written;
      push(taskEvent(current));
      flush();
      await written;
      await this.streamToEnd(s, row, push, signal, done, () => {
        const rest = pending;
        pending = "";
        return { rest, chunks };
      });
    });
  }

  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return this.stream(context, () => true, async (s, push, signal) => {
      const row = await this.task(s, params.id);
      if (isTerminal(row)) throw new UnsupportedOperationError(`Task ${row.id} is ${row.state}: there is nothing left to subscribe to (use GetTask)`);
      push(taskEvent(toTask(row)));
      await this.streamToEnd(s, row, push, signal, undefined, () => ({ rest: "", chunks: 0 }));
    });
  }

  /**
   * Status updates until the end; then the artifact's last chunk (the text not sent yet, or the
   * whole artifact when none was streamed) and the final status. `unsent`: the streamed text not
   * sent yet, and how many chunks were.
   */
  private async streamToEnd(s: CallState, row: TaskRow, push: (e: StreamResponse) => void, signal: AbortSignal, done: Promise<TaskRow | undefined> | undefined, unsent: () => { rest: string; chunks: number }): Promise<void> {
    let last: TaskRow | undefined;
    if (done) {
      last = await Promise.race([done, new Promise<undefined>((r) => signal.addEventListener("abort", () => r(undefined), { once: true }))]);
      last ??= await findTask(this.runtime.pool, s.principal.agent.accountId, s.principal.agent.id, row.id);
    } else {
      await this.follow(s, row, new Date(Date.now() + STREAM_MAX_MS), signal, async (now) => {
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

  /**
   * An SSE stream as an async generator; errors before the first event reach the route as errors.
   * A stream that follows a task (`followsTask`) holds one of its key's slots while it is open.
   */
  private stream(
    context: ServerCallContext,
    followsTask: (s: CallState) => boolean,
    body: (s: CallState, push: (e: StreamResponse) => void, signal: AbortSignal) => Promise<void>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const s = callState(context);
    s.entered = true;
    const events = new EventQueue<StreamResponse>();
    const push = (e: StreamResponse) => events.push(e);
    s.left?.addEventListener("abort", () => void events.return(), { once: true });
    const run = async () => {
      const release = followsTask(s) ? this.streamSlots.take(s.principal.keyId) : undefined;
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

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(context, async (s) => {
      checkHistoryLength(params.historyLength);
      return this.reread(s, params.id, { historyLength: params.historyLength });
    });
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.guard(context, async (s) => {
      const size = params.pageSize ?? 50;
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw new AppError("validation_failed", `pageSize must be between 1 and ${MAX_PAGE}`, { param: "pageSize" });
      let before: readonly [number, string] | undefined;
      try {
        before = params.pageToken ? decodeCursor(params.pageToken, ["number", "string"] as const) : undefined;
      } catch {
        throw new AppError("validation_failed", "pageToken is not a nextPageToken of this list", { param: "pageToken" });
      }
      const state = params.status ? stateName(params.status) : undefined;
      if (params.status && !state) throw new AppError("validation_failed", "status is not a task state this agent uses", { param: "status" });
      checkHistoryLength(params.historyLength);
      const statusAfter = parseTimestamp(params.statusTimestampAfter, "statusTimestampAfter");
      const { accountId, id: agentId } = s.principal.agent;
      const { rows, total } = await listTasks(this.runtime.pool, accountId, agentId, { contextId: params.contextId || undefined, state, statusAfter, before }, size + 1);
      const page = rows.slice(0, size);
      const last = page.at(-1);
      return {
        tasks: page.map((r) => toTask(r, { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts === true })),
        nextPageToken: rows.length > size && last ? encodeCursor([Number(last.cursorUs), last.id]) : "",
        pageSize: size,
        totalSize: total,
      };
    });
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(context, async (s) => {
      const row = await this.task(s, params.id);
      if (isTerminal(row)) throw new TaskNotCancelableError(`Task ${row.id} is already ${row.state}`);
      if (row.kind === "job") {
        try {
          await cancelJob(this.runtime, s.principal.agent.accountId, row.id);
        } catch (err) {
          if (err instanceof AppError && err.code === "job_finished") throw new TaskNotCancelableError(`Task ${row.id} has already ended`);
          throw err;
        }
        return this.reread(s, row.id);
      }
      // A chat turn can be stopped by the instance that runs it.
      if (!cancelLocalChatTask(row.id)) throw new TaskNotCancelableError(`Task ${row.id} is a chat turn running elsewhere; it cannot be canceled now`);
      const until = new Date(Date.now() + 30_000);
      await this.follow(s, row, until, new AbortController().signal, () => {});
      return this.reread(s, row.id);
    });
  }

  // Push notification configs (A2A §3.1.7–3.1.10): stored per task, delivered by the outbound engine (push.ts).
  // Each call counts in the key's rate-limit window, as a chat request does: creates are outbound targets.
  private countCall(s: CallState): Promise<unknown> {
    return consumeRateLimit(this.runtime.pool, s.principal.keyId, s.principal.rateLimitPerMinute, s.onRateLimit);
  }
  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.guard(context, async (s) => {
      await this.countCall(s);
      const task = await this.task(s, params.taskId);
      if (!params.url) throw new AppError("validation_failed", "url is required", { param: "url" });
      const id = await addPushConfig(this.runtime, s.principal.agent.accountId, task, params, "url");
      return pushConfigOf((await findPushConfig(this.runtime.pool, task.id, id))!);
    });
  }
  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.guard(context, async (s) => {
      await this.countCall(s);
      const task = await this.task(s, params.taskId);
      const c = await findPushConfig(this.runtime.pool, task.id, params.id);
      if (!c) throw new TaskNotFoundError(`Push notification config ${params.id} of task ${task.id} not found`);
      return pushConfigOf(c);
    });
  }
  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.guard(context, async (s) => {
      await this.countCall(s);
      // pageSize 0 is proto3's "unset".
      const size = params.pageSize || MAX_PAGE;
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw new AppError("validation_failed", `pageSize must be between 1 and ${MAX_PAGE}`, { param: "pageSize" });
      let after: readonly [number, string] | undefined;
      try {
        after = params.pageToken ? decodeCursor(params.pageToken, ["number", "string"] as const) : undefined;
      } catch {
        throw new AppError("validation_failed", "pageToken is not a nextPageToken of this list", { param: "pageToken" });
      }
      const task = await this.task(s, params.taskId);
      const rows = await listPushConfigs(this.runtime.pool, task.id, size + 1, after);
      const page = rows.slice(0, size);
      const last = page.at(-1);
      return { configs: page.map(pushConfigOf), nextPageToken: rows.length > size && last ? encodeCursor([Number(last.cursorUs), last.rowId]) : "" };
    });
  }
  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return this.guard(context, async (s) => {
      await this.countCall(s);
      const task = await this.task(s, params.taskId);
      await deletePushConfig(this.runtime.pool, task.id, params.id);
    });
  }
}

