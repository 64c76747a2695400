/**
 * The events of one A2A stream, from the handler that produces them to the SDK's transport that
 * consumes them (`for await`): an async iterator fed by `push` and closed by `end`, unbounded (a
 * turn's events are few; the SSE response buffers them anyway). It replaces a Repeater, whose push
 * built several promises per event, and the generator that wrapped it: a push is an array slot,
 * or resolving the one waiting `next()`. `signal` aborts only when the consumer leaves before the
 * end (`return()`), so a stream that ends normally builds no abort reason.
 */
export class EventQueue<T> implements AsyncGenerator<T, void, undefined> {
  private readonly buffered: T[] = [];
  private readonly waiting: { resolve: (r: IteratorResult<T, void>) => void; reject: (err: unknown) => void }[] = [];
  private closed = false;
  private failure: { err: unknown } | undefined;
  private readonly leaving = new AbortController();
  /** Aborted when the consumer leaves before the end. */
  readonly signal = this.leaving.signal;

  /** Whether `end` was called or the consumer left: further pushes are dropped. */
  get ended(): boolean {
    return this.closed;
  }

  push(value: T): void {
    if (this.closed) return;
    const w = this.waiting.shift();
    if (w) w.resolve({ value, done: false });
    else this.buffered.push(value);
  }

  /** Ends the stream after the events already pushed; with `failure`, the consumer's next read throws it. */
  end(failure?: { err: unknown }): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = failure;
    for (const w of this.waiting.splice(0)) this.settleEnded(w);
  }

  private settleEnded(w: { resolve: (r: IteratorResult<T, void>) => void; reject: (err: unknown) => void }): void {
    const failure = this.failure;
    this.failure = undefined;
    if (failure) w.reject(failure.err);
    else w.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T, void>> {
    if (this.buffered.length > 0) return Promise.resolve({ value: this.buffered.shift()!, done: false });
    return new Promise((resolve, reject) => {
      const w = { resolve, reject };
      if (this.closed) this.settleEnded(w);
      else this.waiting.push(w);
    });
  }

  /** The consumer leaves: what is buffered is dropped, and `signal` aborts if the stream had not ended. */
  return(): Promise<IteratorResult<T, void>> {
    this.buffered.length = 0;
    if (!this.closed) {
      this.closed = true;
      this.leaving.abort();
    }
    this.failure = undefined;
    for (const w of this.waiting.splice(0)) w.resolve({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  /** The consumer fails: it leaves, and the error is its own. */
  async throw(err: unknown): Promise<IteratorResult<T, void>> {
    await this.return();
    throw err;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}
