import type express from "express";

/**
 * A Server-Sent Events response for the chat and responses streams. Headers go out with the first
 * event (`open`), so a failure before it still gets a real HTTP status and the SDK's typed error.
 * Events produced in one turn of the event loop (the SSE events of one upstream read) leave in one
 * socket write: they are joined and written once the turn is over. Nothing waits for a later event,
 * so a client sees every token as soon as it would have without this. (Not res.cork(): on a chunked
 * response, Node drops corked writes that precede end().)
 */
export class SseResponse {
  private pending = "";
  /** Events wait for this (`open`'s `holdUntil`). */
  private held: Promise<void> | undefined;
  /** `holdUntil` rejected: nothing written before `end` leaves. */
  private dropped = false;
  /** Writes waiting for a gate of their own (`write`'s `gate`): they follow what was written before it once it passes. */
  private gated: { until: Promise<boolean>; data: string } | undefined;
  opened = false;
  readonly abort = new AbortController();

  constructor(private readonly res: express.Response) {
    res.on("close", () => {
      if (!res.writableFinished) this.abort.abort();
    });
  }

  get gone(): boolean {
    return this.res.destroyed;
  }

  /**
   * Sends the status and headers (once), with `first()` as the first event. With `holdUntil`,
   * the events wait for it: they leave when it resolves, with what is written in the same turn
   * (one socket write), and never if it rejects (an event that names a record must not leave
   * before the record is durable; `end` then sends only its own data). The headers name nothing:
   * they leave in the next turn, while the record is written, not with the events after its commit.
   */
  open(first: () => string, holdUntil?: Promise<void>): void {
    if (this.opened || this.res.destroyed) return;
    this.opened = true;
    const res = this.res;
    res.status(200);
    res.setHeader("content-type", "text/event-stream; charset=utf-8");
    res.setHeader("cache-control", "no-cache");
    res.setHeader("connection", "keep-alive");
    res.setHeader("x-accel-buffering", "no");
    if (holdUntil) {
      this.hold(holdUntil);
      setImmediate(flushHeaders, res);
    }
    this.write(first());
  }

  private hold(until: Promise<void>): void {
    this.held = until;
    until.then(
      () => {
        this.held = undefined;
        if (this.pending) setImmediate(this.flush);
      },
      () => {
        this.held = undefined;
        this.dropped = true;
        this.pending = "";
      },
    );
  }

  private flush = () => {
    if (this.held) return;
    const data = this.pending;
    this.pending = "";
    if (data && !this.res.writableEnded && !this.res.destroyed) this.res.write(data);
  };

  /**
   * Writes an event. With `gate`, it also waits for that (after the stream's own hold) and is
   * dropped if it resolves false or rejects: an event sent ahead of the commit that makes it true.
   * Writes without one meanwhile do not wait for it.
   */
  write(data: string, gate?: Promise<boolean>): void {
    if (this.res.destroyed || this.res.writableEnded || this.dropped) return;
    if (gate) return this.writeGated(data, gate);
    if (!this.pending && !this.held) setImmediate(this.flush);
    this.pending += data;
  }

  private writeGated(data: string, gate: Promise<boolean>): void {
    if (this.gated?.until === gate) {
      this.gated.data += data;
      return;
    }
    const g = { until: gate, data };
    this.gated = g;
    const settle = (pass: boolean) => {
      if (this.gated === g) this.gated = undefined;
      if (pass) this.write(g.data);
    };
    gate.then(settle, () => settle(false));
  }

  /** Ends the response once `gate` passes (after the writes made through it). */
  endWhen(gate: Promise<boolean>): void {
    gate.then(
      (pass) => pass && this.end(""),
      () => {},
    );
  }

  end(data: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    const waiting = this.held ?? this.gated?.until;
    if (waiting) {
      // Still waiting: the end follows the events, or replaces them when they are dropped.
      void waiting.then(
        () => this.end(data),
        () => this.end(data),
      );
      return;
    }
    const all = this.pending + data;
    this.pending = "";
    this.res.end(all);
  }
}

/** The headers, ahead of held events: they name nothing, and the end's write is then only the events. */
function flushHeaders(res: express.Response): void {
  if (!res.headersSent && !res.writableEnded && !res.destroyed) res.flushHeaders();
}

export const sseData = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
