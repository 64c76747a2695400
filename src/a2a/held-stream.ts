import type { StreamResponse } from "@a2a-js/sdk";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import { CALL_STATE, type CallState } from "./call.js";
import type { ResponseHolds } from "./coalesced-writes.js";

/**
 * A REST stream's call state: its holds on the response's writes (coalesced-writes.ts), and
 * `streaming` once its first event was handed to the SDK (the keep-alive waits for it).
 */
export type HeldStreamState = CallState & { writes?: ResponseHolds; streaming?: boolean };

type Events = AsyncGenerator<StreamResponse, void, undefined>;

/**
 * The handler as the SDK's REST router calls it: its two stream methods' events are held as
 * JSON-RPC's are (HeldStream); every other method is the handler's own.
 */
export function withHeldStreams(handler: A2ARequestHandler, errorEvent: StreamErrorEvent): A2ARequestHandler {
  const held = Object.create(handler) as A2ARequestHandler;
  // Made once per process (the router is built once): the two methods wrap the handler's.
  held.sendMessageStream = (params, context) => new HeldStream(handler.sendMessageStream(params, context), context, errorEvent);
  // Once per process, as above.
  held.resubscribe = (params, context) => new HeldStream(handler.resubscribe(params, context), context, errorEvent);
  return held;
}

/** The SSE error event that ends a stream failing with `err` after its first event, or undefined to leave it to the SDK. */
export type StreamErrorEvent = (context: ServerCallContext, err: unknown) => string | undefined;

/**
 * The events of a REST stream, from the handler to the SDK's router, which formats and writes each
 * before it asks for the next. The first names a task whose record may not be durable yet: the
 * response holds the writes until it is (`eventsWaitFor`), and drops them if it could not be
 * written (the stream's error event follows). The end's events sent ahead of their commit
 * (`endHeld`) are written through a gate, and dropped if it fails. An iterator rather than an
 * async generator: a generator's layer of promises per event, on every event of every stream.
 */
class HeldStream implements Events {
  private n = 0;
  private readonly state: HeldStreamState;
  /** The end's last event was handed out: the response ends once its gate passes. */
  private endsWith: Promise<boolean> | undefined;

  constructor(
    private readonly inner: Events,
    private readonly context: ServerCallContext,
    private readonly errorEvent: StreamErrorEvent,
  ) {
    this.state = context.state.get(CALL_STATE) as HeldStreamState;
  }

  async next(): Promise<IteratorResult<StreamResponse, void>> {
    const { state } = this;
    const writes = state.writes;
    // The previous event is written.
    writes?.gate(undefined);
    if (this.endsWith) writes?.endWhen(this.endsWith);
    this.endsWith = undefined;
    let r: IteratorResult<StreamResponse, void>;
    try {
      r = await this.inner.next();
    } catch (err) {
      this.close();
      // Before the first event the SDK answers with the error's HTTP status (rest.ts); after it, the
      // stream ends with the gateway's error event, and the SDK sees a stream that ended.
      const event = this.n > 0 ? this.errorEvent(this.context, err) : undefined;
      if (event === undefined || !writes) throw err;
      writes.write(event);
      return { done: true, value: undefined };
    }
    if (r.done) {
      this.close();
      return r;
    }
    const n = this.n++;
    if (n === 0) {
      if (state.eventsWaitFor && writes) writes.hold(state.eventsWaitFor);
      else await state.eventsWaitFor;
      state.streaming = true;
    } else {
      const held = state.endHeld;
      if (held && n >= held.from && n < held.to) {
        writes?.gate(held.until);
        if (n === held.to - 1) this.endsWith = held.until;
      }
    }
    return r;
  }

  async return(): Promise<IteratorResult<StreamResponse, void>> {
    this.close();
    return this.inner.return(undefined);
  }

  async throw(err: unknown): Promise<IteratorResult<StreamResponse, void>> {
    this.close();
    return this.inner.throw(err);
  }

  /** The stream is over: the SDK writes its error event, if any, after this. */
  private close(): void {
    this.state.writes?.gate(undefined);
    this.state.writes?.pass();
    this.state.streaming = false;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}
