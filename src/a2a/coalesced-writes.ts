import type { ServerResponse } from "node:http";

type Chunk = string | Uint8Array;
type Callback = (err?: Error | null) => void;
type Write = (this: ServerResponse, chunk: Chunk, ...rest: unknown[]) => boolean;
type End = (this: ServerResponse, ...args: unknown[]) => ServerResponse;

/** A response's writes waiting for the end of the turn, and the methods they go to then. */
interface Coalesced {
  pending: Chunk[];
  headers: boolean;
  scheduled: boolean;
  write: Write;
  end: End;
  flushHeaders: (this: ServerResponse) => void;
}
const COALESCED = Symbol("coalesced writes");
type CoalescingResponse = ServerResponse & { [COALESCED]: Coalesced };

/**
 * Makes what the A2A SDK's express router writes on a stream leave in one socket write per turn
 * of the event loop, as our own SSE responses do (chat/sse.ts): the router flushes the headers,
 * then writes each event and the end separately, so a turn's end (the task, its artifact and its
 * final status, all ready once its record is durable) cost four or five writes, each a system
 * call and a TCP segment the client wakes for. Writes wait only for the end of the current turn;
 * nothing waits for a later event. A write or end with a callback, or a binary chunk with an
 * encoding, passes through at once, after what is pending.
 *
 * The replacements are the same three functions for every response and find theirs through
 * `this`. Function literals written into the response's methods per stream would live in the
 * old generation and keep the response and its request through young collections (9 kB promoted
 * a stream; see rate-limit-headers.ts).
 */
export function coalesceWrites(res: ServerResponse): void {
  (res as CoalescingResponse)[COALESCED] = {
    pending: [],
    headers: false,
    scheduled: false,
    write: res.write as Write,
    end: res.end as End,
    flushHeaders: res.flushHeaders,
  };
  res.flushHeaders = flushHeadersLater;
  res.write = writeLater as ServerResponse["write"];
  res.end = endWithPending as ServerResponse["end"];
}

function flushHeadersLater(this: CoalescingResponse): void {
  this[COALESCED].headers = true;
  schedule(this);
}

function writeLater(this: CoalescingResponse, chunk: Chunk, ...rest: unknown[]): boolean {
  if (this.writableEnded || this.destroyed) return false;
  const c = this[COALESCED];
  if (rest.length > 0) {
    flush(this);
    return c.write.call(this, chunk, ...(rest as [Callback]));
  }
  c.pending.push(chunk);
  schedule(this);
  return true;
}

function endWithPending(this: CoalescingResponse, chunk?: Chunk | (() => void), ...rest: unknown[]): ServerResponse {
  const c = this[COALESCED];
  if (typeof chunk === "function" || rest.length > 0) {
    flush(this);
    return c.end.call(this, chunk, ...rest);
  }
  if (chunk !== undefined && chunk !== null) c.pending.push(chunk);
  return c.end.call(this, take(c));
}

function schedule(res: CoalescingResponse): void {
  const c = res[COALESCED];
  if (c.scheduled) return;
  c.scheduled = true;
  setImmediate(flush, res);
}

function flush(res: CoalescingResponse): void {
  const c = res[COALESCED];
  c.scheduled = false;
  if (res.writableEnded || res.destroyed) return;
  const data = take(c);
  if (data !== undefined) c.write.call(res, data);
  else if (c.headers && !res.headersSent) c.flushHeaders.call(res);
  c.headers = false;
}

function take(c: Coalesced): Chunk | undefined {
  const { pending } = c;
  if (pending.length === 0) return undefined;
  const all = pending.length === 1 ? pending[0]! : pending.every((x) => typeof x === "string") ? pending.join("") : Buffer.concat(pending.map((x) => (typeof x === "string" ? Buffer.from(x) : x)));
  c.pending = [];
  return all;
}
