import type { Message } from "@a2a-js/sdk";
import { AppError } from "../errors/app-error.js";
import { chooseModel, executeTurn } from "../chat/engine.js";
import { parseChatRequest } from "../chat/request.js";
import type { RateLimitState } from "../chat/rate-limit.js";
import { checkModelOptions } from "../providers/index.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { chatContent, storedRequest } from "./mapping.js";
import { chatTaskRow, finishChatTask, finishTurnWithTask, makeTaskDurable, openTurnWithTask, type ChatTaskEnd, type TaskRow } from "./store.js";
import { StreamedTaskDurability } from "./task-durability.js";

const CANCELED = "Canceled by the client";
/** A stream whose upstream sent no text this long after the open makes its task durable anyway: the client learns the id early. */
const DURABLE_WITHIN_MS = 5;

/** The open statement's refusals (before any hold, so before any task): 401 key gone, 402, 404 thread, 409 thread_busy, 429. */
const refusedByOpen = (err: unknown) => err instanceof AppError && [401, 402, 404, 409, 429].includes(err.status);

/**
 * A chat agent's A2A message is a chat turn on the context's thread, through the chat API's own
 * engine (validation, rate limit, hold, thread lease, billing, stored messages). The task record
 * is written by the turn's open statement when it accepts the turn, so a refused turn (402, 429,
 * thread_busy) is an error and no task; its end is written when the turn ends, whoever is still listening: an answered
 * turn's in the turn's own finish statement (one durable commit for both), a failed turn's alone.
 */

export interface StartedChatTask {
  taskId: string;
  contextId: string;
  /** The task as stored when it started. */
  row: TaskRow;
  /** Settles when the task's end is stored: with the task as stored then, when this process wrote it. */
  done: Promise<TaskRow | undefined>;
  /** With `durability: "alongside"`: resolves once the task's record is durable (rejects if that failed). */
  durable?: Promise<void>;
}

/**
 * How the task's record becomes durable before its id leaves (a client that saw an id finds the
 * task after a PostgreSQL crash): "finish" (a blocking send: the id leaves after the turn's
 * synchronous finish, which flushes the open too), "open" (the open commits synchronously: the id
 * leaves right after it), "alongside" (a stream: the open commits asynchronously, so the upstream call starts at once;
 * the id waits for the turn's end, or for a small synchronous commit made when the first text
 * arrives before the turn finishes, or 5 ms after the open without text: task-durability.ts).
 */
export type TaskDurability = "finish" | "open" | "alongside";

/** Turns in flight in this process, so CancelTask can stop them. */
const running = new Map<string, AbortController>();

export function cancelLocalChatTask(taskId: string): boolean {
  const c = running.get(taskId);
  if (!c) return false;
  c.abort();
  return true;
}

export async function startChatTask(
  runtime: Runtime,
  principal: KeyPrincipal,
  message: Message,
  hooks: { onRateLimit?: (s: RateLimitState) => void; onDelta?: (text: string) => void; durability: TaskDurability },
): Promise<StartedChatTask> {
  const chat = parseChatRequest({ messages: [{ role: "user", content: chatContent(message) }], ...(message.contextId ? { thread_id: message.contextId } : {}) });
  const model = chooseModel(principal.agent, null);
  checkModelOptions(runtime.config, model, chat, chat.messages, (_i, j) => `message.parts[${j}]`);
  const abort = new AbortController();
  const request = storedRequest(message, true);
  // The task is written by the turn's open statement, when it places the hold (a2a/store.ts).
  const task = openTurnWithTask({ request, durable: hooks.durability === "open" });
  let contextId = "";
  let endRow: TaskRow | undefined;
  /** Set once the turn's finish statement carries the task's end (the finish failing throws, and the end is written alone). */
  let endWritten = false;
  /** Set once the turn's finish starts (it will store the end: the record need not be flushed on its own). */
  let finishing = false;
  let durability: StreamedTaskDurability | undefined;
  let textSeen = false;
  const onDelta = hooks.onDelta;
  let accepted!: (info: { threadId: string }) => void;
  const started = new Promise<{ threadId: string }>((resolve) => (accepted = resolve));
  const turn = executeTurn(
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
      stream: hooks.onDelta !== undefined,
      onStart: accepted,
      onDelta: onDelta && ((text: string) => {
        if (!textSeen) {
          textSeen = true;
          // The deltas of this read (and the end, if it came with them) are handled first.
          setImmediate(() => finishing || durability?.flushNow());
        }
        onDelta(text);
      }),
      signal: abort.signal,
      openWith: task.openWith,
      // An answered turn's task ends in the turn's own finish statement: no commit of its own.
      finishWith: async ({ content }) => {
        endWritten = true;
        finishing = true;
        const end: ChatTaskEnd = abort.signal.aborted ? { state: "canceled", answer: content, error: CANCELED } : { state: "completed", answer: content, error: null };
        const at = new Date();
        endRow = chatTaskRow(task.id, contextId, request, end, at);
        return finishTurnWithTask(task.id, end, at);
      },
    },
  );
  let threadId: string;
  try {
    ({ threadId } = await Promise.race([started, turn.then(() => started)]));
  } catch (err) {
    // Refused by the open statement (402, 429, thread_busy, an unknown thread, the key gone): no
    // task was written, the caller gets the error. Failed after the open placed the hold: the
    // task it wrote ends failed (nobody knows its id, but ListTasks shows it).
    if (!refusedByOpen(err)) finishChatTask(runtime.pool, task.id, { state: "failed", answer: null, error: err instanceof AppError ? err.message : "The turn failed" }).catch((e) => runtime.log.error({ err: e }, "could not store the end of an A2A chat task"));
    throw err;
  }
  contextId = threadId;
  if (hooks.durability === "alongside") durability = new StreamedTaskDurability(() => makeTaskDurable(runtime.pool, task.id), DURABLE_WITHIN_MS);
  // Either end is a synchronous commit after the open's: the record is durable with it.
  const end = async (state: "completed" | "failed" | "canceled", answer: string | null, error: string | null): Promise<TaskRow | undefined> => {
    running.delete(task.id);
    if (endWritten) {
      durability?.durable();
      return endRow;
    }
    await finishChatTask(runtime.pool, task.id, { state, answer, error });
    durability?.durable();
    return undefined;
  };
  running.set(task.id, abort);
  const done = turn.then(
    (r) => end(abort.signal.aborted ? "canceled" : "completed", r.content, abort.signal.aborted ? CANCELED : null),
    (err: unknown) => {
      // The finish statement failed or refused (it throws then): it ended nothing; the end is written alone.
      endWritten = false;
      endRow = undefined;
      finishing = false;
      return end(abort.signal.aborted ? "canceled" : "failed", null, abort.signal.aborted ? CANCELED : err instanceof AppError ? err.message : "The turn failed");
    },
  );
  done.catch((err) => {
    runtime.log.error({ err }, "could not store the end of an A2A chat task");
    durability?.flushNow();
  });
  const row = chatTaskRow(task.id, threadId, request, { state: "working", answer: null, error: null }, task.at);
  return { taskId: row.id, contextId: threadId, row, done: done.catch(() => undefined), durable: durability?.ready };
}
