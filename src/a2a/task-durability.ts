/**
 * When a streamed chat task's record, committed asynchronously by its turn's open, becomes
 * durable, so its id may leave (`ready`). Whichever comes first: the turn's end stored (a
 * synchronous commit after the open's flushes it too: an answer that comes at once needs no
 * statement of its own), or `flush` (a small synchronous commit), started when the first text
 * arrives and the turn is not finishing, or `withinMs` after the open when none arrived (so a
 * slow upstream's client learns the id early). Nothing is left pending: the timer is cleared on
 * the first of these.
 */
export class StreamedTaskDurability {
  /** Resolves once the record is durable; rejects when `flush` failed (and nothing else made it durable). */
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (err: unknown) => void;
  private flushing = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly flush: () => Promise<void>,
    withinMs: number,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // awaited by the stream; a stream that failed first does not
    this.timer = setTimeout(() => this.flushNow(), withinMs);
    this.timer.unref();
  }

  /** Makes the record durable now (once), unless it already is. */
  flushNow(): void {
    clearTimeout(this.timer);
    if (this.flushing || this.settled) return;
    this.flushing = true;
    this.flush().then(
      () => this.durable(),
      (err: unknown) => {
        if (this.settled) return;
        this.settled = true;
        this.rejectReady(err);
      },
    );
  }

  /** A synchronous commit after the open's was made (the turn's end stored): the record is durable. */
  durable(): void {
    clearTimeout(this.timer);
    if (this.settled) return;
    this.settled = true;
    this.resolveReady();
  }
}
