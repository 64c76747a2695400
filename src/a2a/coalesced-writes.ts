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
  /** Everything written waits for this (ResponseHolds.hold), from `pending[heldFrom]` on; the header flush does not. */
  held?: Promise<void>;
  heldFrom: number;
  /** The hold rejected: writes are dropped until `ResponseHolds.pass` (the stream's error event). */
  dropping?: boolean;
  /** The gate whose writes are not settled yet, and the one that takes the writes now (ResponseHolds.gate). */
  gated?: Gate;
  gating?: Gate;
  write: Write;
  end: End;
  flushHeaders: (this: ServerResponse) => void;
}

/** Writes that wait for a gate of their own, and join the pending ones if it passes (`passed`, once settled). */
interface Gate {
  until: Promise<boolean>;
  chunks: Chunk[];
  passed?: boolean;
}
const COALESCED = Symbol("coalesced writes");
type CoalescingResponse = ServerResponse & { [COALESCED]: Coalesced };

/**
 * Makes what the A2A SDK's express router writes on a stream leave in one socket write per turn
 * of the event loop, as our own SSE responses do (chat/sse.ts): the router flushes the headers,
 * then writes each event and the end separately, so a turn's end (the task, its artifact and its
 * final status, all ready once its record is durable) cost four or five writes, each a system
 * call and a TCP segment the client wakes for. Writes wait only for the end of the current turn,
 * and for the holds the stream sets (`ResponseHolds`, returned): nothing waits for a later event.
 * A write or end with a callback, or a binary chunk with an
 * encoding, passes through at once, after what is pending.
 *
 * The replacements are the same three functions for every response and find theirs through
 * `this`. Function literals written into the response's methods per stream would live in the
 * old generation and keep the response and its request through young collections (9 kB promoted
 * a stream; see rate-limit-headers.ts).
 */
export function coalesceWrites(res: ServerResponse): ResponseHolds {
  (res as CoalescingResponse)[COALESCED] = {
    pending: [],
    heldFrom: 0,
    headers: false,
    scheduled: false,
    write: res.write as Write,
    end: res.end as End,
    flushHeaders: res.flushHeaders,
  };
  res.flushHeaders = flushHeadersLater;
  res.write = writeLater as ServerResponse["write"];
  res.end = endWithPending as ServerResponse["end"];
  return new ResponseHolds(res as CoalescingResponse);
}

/**
 * Holds a stream's writes for what its events name, as chat/sse.ts does for JSON-RPC: the events
 * are formatted and written as they come, and leave once the record they name is durable. A
 * class, so nothing is made per response but the object.
 */
export class ResponseHolds {
  constructor(private readonly res: CoalescingResponse) {}

  /**
   * What is written from now on waits for `until`; when it rejects, the writes made meanwhile are
   * dropped, and so are later ones until `pass` (an event written just after the rejection names
   * what it held back too). The header flush does not wait: the headers name nothing, and they
   * leave while the record is written instead of with the end, after its commit.
   */
  hold(until: Promise<void>): void {
    const res = this.res;
    const c = res[COALESCED];
    c.held = until;
    c.heldFrom = c.pending.length;
    until.then(
      () => release(res, until, false),
      () => release(res, until, true),
    );
  }

  /** Ends the response once `until` passes (after the writes made through its gate). */
  endWhen(until: Promise<boolean>): void {
    const res = this.res;
    until.then(
      (pass) => pass && endWithPending.call(res),
      () => {},
    );
  }

  /** Writes `chunk` as the response's own write would (after what is pending, through any hold). */
  write(chunk: Chunk): void {
    this.res.write(chunk);
  }

  /** Writes from now on leave even after a rejected hold: the stream's error event. */
  pass(): void {
    this.res[COALESCED].dropping = false;
  }

  /**
   * The writes from now until the next call also wait for `until` (after any hold), and are
   * dropped when it resolves false or rejects; `undefined` ends the gate's writes.
   */
  gate(until: Promise<boolean> | undefined): void {
    const c = this.res[COALESCED];
    if (!until) {
      c.gating = undefined;
      return;
    }
    if (c.gated?.until !== until) {
      const g: Gate = { until, chunks: [] };
      const res = this.res;
      c.gated = g;
      until.then(
        (pass) => settleGate(res, g, pass),
        () => settleGate(res, g, false),
      );
    }
    c.gating = c.gated;
  }
}

function release(res: CoalescingResponse, until: Promise<void>, drop: boolean): void {
  const c = res[COALESCED];
  if (c.held !== until) return;
  c.held = undefined;
  if (drop) {
    c.pending.length = c.heldFrom;
    c.dropping = true;
  }
  schedule(res);
}

function settleGate(res: CoalescingResponse, g: Gate, pass: boolean): void {
  const c = res[COALESCED];
  if (c.gated === g) c.gated = undefined;
  g.passed = pass;
  const chunks = g.chunks;
  g.chunks = [];
  if (!pass || res.writableEnded || res.destroyed) return;
  c.pending.push(...chunks);
  schedule(res);
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
  if (c.dropping) return true;
  const g = c.gating;
  // A gate that settled before the write (it may, between the gate's call and the SDK's write) decides it at once.
  if (!g || g.passed) c.pending.push(chunk);
  else if (g.passed === undefined) g.chunks.push(chunk);
  schedule(this);
  return true;
}

function endWithPending(this: CoalescingResponse, chunk?: Chunk | (() => void), ...rest: unknown[]): ServerResponse {
  const c = this[COALESCED];
  // Ended already (endWhen): the SDK's own end comes after.
  if (this.writableEnded) return this;
  const waiting = c.held ?? c.gated?.until;
  if (waiting) {
    // The end follows the held writes, or what is left when they are dropped.
    const again = () => endWithPending.call(this, chunk, ...rest);
    waiting.then(again, again);
    return this;
  }
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
  // The headers name nothing: they leave at once, the held writes when their hold passes.
  const data = c.held ? undefined : take(c);
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
