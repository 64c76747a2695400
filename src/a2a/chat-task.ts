import { setImmediate as nextTurn } from "node:timers/promises";
import type { Message } from "@a2a-js/sdk";
import { AppError } from "../errors/app-error.js";
import { chooseModel, executeTurn } from "../chat/engine.js";
import { inFlightTurns, isShutdownCut, SHUTTING_DOWN } from "../chat/in-flight.js";
import { parseChatRequest } from "../chat/request.js";
import type { RateLimitState } from "../chat/rate-limit.js";
import { newId } from "../infra/ids.js";
import { checkModelOptions } from "../providers/index.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";
import { chatContent, storedRequest } from "./mapping.js";
import { A2A_CANCEL_CHANNEL, chatTaskRecord, chatTaskRow, endChatTask, finishTurnWithTask, insertWorkingChatTask, openTurnWithTask, requestChatCancel, type ChatTaskEnd, type ChatTaskRecord } from "./chat-task-store.js";
import type { TaskRow } from "./store.js";
import { StreamedTaskRecord } from "./streamed-task-record.js";
import { clientContext, ownContext, recordClientContext } from "./contexts.js";

const CANCELED = "Canceled by the client";

/**
 * A chat agent's A2A message is a chat turn on the context's thread, through the chat API's own
 * engine (validation, rate limit, hold, thread lease, billing, stored messages). A refused turn
 * (402, 429, thread_busy) is an error and no task. The task's record is written when its id is
 * about to leave (chat-task-store.ts): an answered turn's end in the turn's own finish statement (one
 * durable commit for both), a failed turn's alone.
 */

export interface StartedChatTask {
  taskId: string;
  contextId: string;
  /** The task as it started. */
  row: TaskRow;
  /** Settles when the task's end is stored: with the task as stored then, when this process wrote it. */
  done: Promise<TaskRow | undefined>;
  /** With `record: "alongside"`: resolves once the task's record is written and durable (rejects if that failed). */
  written?: Promise<void>;
  /**
   * With `record: "finish"`: writes the record now, working, unless the finish already claimed it;
   * resolves once the record (working, or the end) is written and durable.
   */
  writeNow?: () => Promise<void>;
  /** Whether the turn's end is on its way (its finish began, or the turn ended): no more text comes. */
  ending: () => boolean;
  /**
   * Resolves once the turn's finish statement, which stores the task's end, is on its way (never
   * for a turn that ends otherwise): `plannedEnd` is then the end as it stores it, and `done`
   * settles with that same row if it commits.
   */
  finishing: Promise<void>;
  plannedEnd: () => TaskRow | undefined;
  /**
   * Resolves as soon as that finish statement's outcome is known, before the turn's own steps
   * after it: true when it committed (`plannedEnd` is the task as stored), false when it failed or
   * refused (the end is then written alone), or when the turn ended without one.
   */
  endStored: Promise<boolean>;
  /** A stream's (`record: "alongside"`): resolves once a statement that writes the task's record is on its way, its own insert or the finish. */
  recordWriteBegan?: Promise<void>;
}

/**
 * When the task's record is written, so that a client that saw its id finds it (after a
 * PostgreSQL crash too): "open" (the id leaves right after the open: a non-blocking send, or a
 * push config that refers to the task; the open commits synchronously), "finish" (a blocking send:
 * the id leaves with the end, which the finish writes; if the send's wait runs out first,
 * `writeNow` writes it working, as a stream's early write does, and the finish ends that row), "alongside" (a stream: the finish writes
 * it, or its own statement does when the id must leave before the end: streamed-task-record.ts).
 */
export type TaskRecordTiming = "open" | "finish" | "alongside";

/** Turns in flight on each instance (its runtime), so CancelTask can stop them. */
const turnsOf = perRuntime(() => new Map<string, AbortController>());

/** Stops the chat turn of `taskId` if this instance runs it; false when it does not. */
function cancelLocalChatTask(runtime: Runtime, taskId: string): boolean {
  const c = turnsOf.peek(runtime)?.get(taskId);
  if (!c) return false;
  c.abort();
  return true;
}

/**
 * Stops the chat turn of `taskId` wherever it runs: here, or on the instance that runs it, told
 * through NOTIFY (`listenForChatCancels`). Nothing answers for the other instances: the caller
 * waits for the task's end.
 */
export async function cancelChatTask(runtime: Runtime, taskId: string): Promise<void> {
  if (!cancelLocalChatTask(runtime, taskId)) await requestChatCancel(runtime.pool, taskId);
}

/** This instance stops its own turns when another asks (once per instance, by the A2A routes). */
export function listenForChatCancels(runtime: Runtime): void {
  void runtime.events.subscribe(A2A_CANCEL_CHANNEL, (taskId) => void cancelLocalChatTask(runtime, taskId));
}

export async function startChatTask(
  runtime: Runtime,
  principal: KeyPrincipal,
  message: Message,
  hooks: { onRateLimit?: (s: RateLimitState) => void; onDelta?: (text: string) => void; record: TaskRecordTiming },
): Promise<StartedChatTask> {
  const parts = chatContent(message);
  // One text part is the chat API's string content (the same turn; the parser builds no parts for it).
  const content = parts.length === 1 && parts[0]!.type === "text" ? parts[0]!.text : parts;
  const context = ownContext(message.contextId) ?? (await clientContext(runtime.pool, principal, message.contextId));
  const chat = parseChatRequest({ messages: [{ role: "user", content }], ...(context.threadId ? { thread_id: context.threadId } : {}) });
  const model = chooseModel(principal.agent, null);
  checkModelOptions(runtime.config, model, chat, chat.messages, (_i, j) => `message.parts[${j}]`);
  const abort = new AbortController();
  const taskId = newId("tsk");
  const startedAt = new Date();
  let record: ChatTaskRecord | undefined;
  // The message as the task keeps it (converted, as JSON text) is made while the upstream call
  // runs, not before the open, unless the open writes the record.
  const taskRecord = () => (record ??= chatTaskRecord(taskId, principal.agent.accountId, principal.agent.id, storedRequest(message, true), startedAt));
  if (hooks.record === "open") taskRecord();
  let contextId = "";
  let endRow: TaskRow | undefined;
  /** Set once the turn's finish statement carries the task's end (the finish failing throws, and the end is written alone). */
  let endWritten = false;
  let ending = false;
  let streamed: StreamedTaskRecord | undefined;
  let textSeen = false;
  const onDelta = hooks.onDelta;
  let finishBegan!: () => void;
  const finishing = new Promise<void>((resolve) => (finishBegan = resolve));
  let endStoredAs!: (stored: boolean) => void;
  const endStored = new Promise<boolean>((resolve) => (endStoredAs = resolve));
  // The finish's commit makes the record durable: the stream's events leave then, not after the turn's own steps.
  const onOutcome = (settled: boolean) => {
    if (settled) streamed?.written();
    endStoredAs(settled);
  };
  let accepted!: (info: { threadId: string }) => void;
  const started = new Promise<{ threadId: string }>((resolve) => (accepted = resolve));
  // In the instance's turns, so a graceful stop cuts it as it cuts a chat completion (in-flight.ts):
  // `signal` fires on CancelTask (`abort`) or on the cut.
  const turn = inFlightTurns(runtime).run(abort.signal, (signal) =>
    executeTurn(
      runtime,
      {
        agent: principal.agent,
        keyId: principal.keyId,
        threadId: chat.threadId,
        messages: chat.messages,
        maxTokens: chat.maxTokens,
        rateLimit: { keyId: principal.keyId, limit: principal.rateLimitPerMinute, onState: hooks.onRateLimit },
      },
      {
        stream: onDelta !== undefined,
        onStart: accepted,
        onDelta: onDelta && ((text: string) => {
          if (!textSeen) {
            textSeen = true;
            // The deltas of this read (and the end, if it came with them: the finish claims the record first) are handled first.
            setImmediate(() => streamed?.writeNow());
          }
          onDelta(text);
        }),
        signal,
        openWith: hooks.record === "open" ? openTurnWithTask(taskRecord()) : undefined,
        // An answered turn's task ends in the turn's own finish statement: no commit of its own.
        finishWith: async ({ content, aborted }) => {
          ending = true;
          // Was the record written before: by the open, or by the stream's own insert (once it settled)?
          const claimed = streamed?.claim();
          const writtenBefore = hooks.record === "open" || (claimed ? await claimed : false);
          // The stream's insert failed (its id never left): the end is written alone, whatever that insert did.
          if (claimed && !writtenBefore) return undefined;
          endWritten = true;
          // A stream cut by a graceful stop mid-answer is saved with what it sent, and fails (its
          // client retries); one whose answer was whole when the cut came completes, as a chat completion does.
          const end: ChatTaskEnd = abort.signal.aborted
            ? { state: "canceled", answer: content, error: CANCELED }
            : aborted && signal.aborted
              ? { state: "failed", answer: content, error: SHUTTING_DOWN }
              : { state: "completed", answer: content, error: null };
          const at = new Date();
          endRow = chatTaskRow(taskId, contextId, taskRecord().request, end, at);
          finishBegan();
          return { ...finishTurnWithTask(taskRecord(), writtenBefore, end, at), onOutcome };
        },
      },
    ),
  );
  // Refused (402, 429, thread_busy, an unknown thread, the key gone) or failed before the upstream
  // call: the caller gets the error and never the id. A record the open wrote reads as failed
  // once the turn's lease is released (store.ts INTERRUPTED).
  const { threadId } = await Promise.race([started, turn.then(() => started)]);
  // Set before any await: the turn's finish (which may come meanwhile) builds the end's row with it.
  contextId = context.clientContextId ?? threadId;
  // The turn's upstream request leaves in this turn of the event loop: the task's own work (its
  // first events, built and formatted) waits for the next, so it overlaps the upstream's answer
  // instead of delaying the request (the upstream cannot answer before then).
  await nextTurn();
  taskRecord();
  // A client's new context: its thread is recorded before the task's id (and so the context) leaves.
  if (context.clientContextId && !context.threadId && !(await recordClientContext(runtime.pool, principal, context.clientContextId, threadId))) {
    contextId = threadId;
    if (endRow) endRow = { ...endRow, contextId };
  }
  if (hooks.record !== "open") streamed = new StreamedTaskRecord(() => insertWorkingChatTask(runtime.pool, taskRecord(), threadId), hooks.record === "alongside" ? runtime.config.a2a.streamRecordAfterMs : undefined);
  const turns = turnsOf(runtime);
  const end = async (state: "completed" | "failed" | "canceled", answer: string | null, error: string | null): Promise<TaskRow | undefined> => {
    ending = true;
    turns.delete(taskId);
    endStoredAs(false); // a finish that settled told its outcome before: this changes nothing then
    if (endWritten) {
      streamed?.written();
      return endRow;
    }
    // No write of the record may be in flight while the end is written alone.
    await streamed?.claim();
    await endChatTask(runtime.pool, taskRecord(), threadId, { state, answer, error });
    streamed?.written();
    return undefined;
  };
  turns.set(taskId, abort);
  const done = turn.then(
    (r) => end(abort.signal.aborted ? "canceled" : "completed", r.content, abort.signal.aborted ? CANCELED : null),
    (err: unknown) => {
      // The finish statement failed or refused (it throws then): it ended nothing; the end is
      // written alone. A cut that came after the finish wrote the end (a stream saved with what it sent) changes nothing.
      if (!(endWritten && isShutdownCut(err))) {
        endWritten = false;
        endRow = undefined;
      }
      return end(abort.signal.aborted ? "canceled" : "failed", null, abort.signal.aborted ? CANCELED : err instanceof AppError ? err.message : "The turn failed");
    },
  );
  done.catch((err) => {
    runtime.log.error({ err }, "could not store the end of an A2A chat task");
    streamed?.failed(err);
  });
  const row = chatTaskRow(taskId, contextId, taskRecord().request, { state: "working", answer: null, error: null }, startedAt);
  const early = streamed;
  const writeNow = early && hooks.record === "finish" ? () => (early.writeNow(), early.ready) : undefined;
  return { taskId: row.id, contextId, row, done: done.catch(() => undefined), written: hooks.record === "alongside" ? early?.ready : undefined, writeNow, ending: () => ending, finishing, plannedEnd: () => endRow, endStored, recordWriteBegan: early && hooks.record === "alongside" ? Promise.race([early.writeBegan, finishing]) : undefined };
}
