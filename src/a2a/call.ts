import type { Task } from "@a2a-js/sdk";
import type { ServerCallContext } from "@a2a-js/sdk/server";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import { unavailableError } from "../errors/unavailable.js";
import { unstorableTextError } from "../errors/unstorable.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { RateLimitState } from "../chat/rate-limit.js";
import type { Runtime } from "../runtime/runtime.js";
import { toTask, type TaskView } from "./mapping.js";
import type { RateLimitNote } from "./rate-limit-headers.js";
import type { AheadAnswer } from "./answer-ahead.js";
import { findTask, TERMINAL_STATES, type TaskRow } from "./store.js";

/**
 * A call in A2A v0.3 (both bindings): no `A2A-Version` header (the spec's default for a client
 * that sends none), an empty one, or 0.3 with or without a patch number. Its errors are v0.3's
 * (`{ code, message, data }` on HTTP+JSON).
 */
export const isLegacyVersion = (version: string | undefined): boolean => /^(0\.3(\.\d+)?)?$/.test((version ?? "").trim());

/** What the route hands the handler with each request (in the SDK's per-request context). */
export interface CallState extends RateLimitNote {
  principal: KeyPrincipal;
  /** Notes the key's window on `rateLimit`; the response's head carries it (rate-limit-headers.ts). */
  onRateLimit: (s: RateLimitState) => void;
  /** Set when the call failed with an AppError, so the route answers with its status and code. */
  failure?: AppError;
  /** Set once the SDK has parsed the request and handed it to this handler. */
  entered?: boolean;
  /** A stream's events wait for this (the first names a task whose record is not yet durable). */
  eventsWaitFor?: Promise<void>;
  /** How many events the stream's handler has pushed (stream.ts; the transports pass them on one for one). */
  pushed?: number;
  /**
   * The stream's events numbered `from` to `to` - 1 (counting from 0, as pushed) also wait for
   * `until`, and are dropped when it resolves false: the end's events, sent ahead of the commit
   * of the statement that stores the end (stream.ts). They are the stream's last: once they pass,
   * the response ends, without waiting for the handler's own end to come through the SDK.
   */
  endHeld?: { from: number; to: number; until: Promise<boolean> };
  /**
   * Aborted when the client goes away before the answer's end. A stream stops following its task
   * then, even while no event is due: the SDK's generator around ours would pass the client's
   * leaving on only with the next event, and the stream would hold its key's slot until then.
   */
  left?: AbortSignal;
  /** A v1.0 SendMessage's: where its answer goes when the task's end commits (answer-ahead.ts). */
  ahead?: AheadAnswer;
}
export const CALL_STATE = "agw";

export const isTerminal = (row: TaskRow) => TERMINAL_STATES.includes(row.state);

/**
 * Notes a gateway error for the route (the SDK would report it as an internal error). Text
 * PostgreSQL cannot store and a database outage are the same 400 / 503 as on every other route.
 */
export function noteFailure(s: CallState, err: unknown): unknown {
  const known = err instanceof AppError ? err : (unstorableTextError(err) ?? unavailableError(err));
  if (known) s.failure = known;
  return known ?? err;
}

export function callState(context: ServerCallContext): CallState {
  const s = context.state.get(CALL_STATE) as CallState | undefined;
  if (!s) throw new Error("A2A call without its call state");
  return s;
}

/** Runs a call, noting an AppError for the route (the SDK would report it as an internal error). */
export async function guard<T>(context: ServerCallContext, fn: (s: CallState) => Promise<T>): Promise<T> {
  const s = callState(context);
  s.entered = true;
  try {
    return await fn(s);
  } catch (err) {
    throw noteFailure(s, err);
  }
}

/** The caller's agent's task `id`, or the protocol's TaskNotFound. */
export async function ownTask(runtime: Runtime, s: CallState, id: string): Promise<TaskRow> {
  const row = id ? await findTask(runtime.pool, s.principal.agent.accountId, s.principal.agent.id, id) : undefined;
  if (!row) throw new TaskNotFoundError(`Task ${id} not found`);
  return row;
}

/** The task as stored now, in A2A's shape. */
export async function rereadTask(runtime: Runtime, s: CallState, id: string, view: TaskView = {}): Promise<Task> {
  return toTask(await ownTask(runtime, s, id), view);
}
