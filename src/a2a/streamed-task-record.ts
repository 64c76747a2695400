/**
 * When a streamed chat task's record is written, so its id may leave (`ready`). Its turn's finish
 * writes it, already ended, when the answer comes before the id has to leave (no statement of its
 * own: the common case of a fast upstream). The id has to leave earlier when text arrives while
 * the turn is not finishing, or `withinMs` after the open without text (a slow upstream's client
 * learns the id early): then `write` inserts it, working, in a synchronous commit of its own, and
 * the finish ends that row. `claim` is the finish's question "did a write start?", and after it no
 * write starts: exactly one of the two writes the record. Nothing is left pending: the timer is
 * cleared on the first of these. A blocking send's record works the same way, without the timer:
 * its finish writes it, unless the send's wait runs out first (`writeNow`).
 */
export class StreamedTaskRecord {
  /** Resolves once the record is written and durable; rejects when `write` failed (and nothing else wrote it). */
  readonly ready: Promise<void>;
  /** Resolves when `write` starts (never, when the finish claimed the record). */
  readonly writeBegan: Promise<void>;
  private writeStarted!: () => void;
  private resolveReady!: () => void;
  private rejectReady!: (err: unknown) => void;
  /** The write of the record on its own, once started (true: it committed). */
  private ownWrite: Promise<boolean> | undefined;
  private claimed = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: () => Promise<void>,
    /** Without it, only `writeNow` writes the record (a blocking send whose wait runs out). */
    withinMs?: number,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // awaited by the stream; a stream that failed first does not
    this.writeBegan = new Promise<void>((resolve) => (this.writeStarted = resolve));
    this.timer = withinMs === undefined ? undefined : setTimeout(() => this.writeNow(), withinMs).unref();
  }

  /** Writes the record now (once), unless a write started or the finish claimed it. */
  writeNow(): void {
    clearTimeout(this.timer);
    if (this.ownWrite || this.claimed) return;
    this.writeStarted();
    this.ownWrite = this.write().then(
      () => {
        this.written();
        return true;
      },
      (err: unknown) => {
        if (!this.settled) {
          this.settled = true;
          this.rejectReady(err);
        }
        return false;
      },
    );
  }

  /**
   * The finish asks whether the record was written on its own: false (nothing started; no write
   * will start now: the finish writes it), or whether that write committed, once it settled.
   */
  claim(): Promise<boolean> | false {
    clearTimeout(this.timer);
    if (this.ownWrite) return this.ownWrite;
    this.claimed = true;
    return false;
  }

  /** Nothing wrote the record (the turn's end could not be stored): the id must not leave. */
  failed(err: unknown): void {
    clearTimeout(this.timer);
    if (this.settled) return;
    this.settled = true;
    this.rejectReady(err);
  }

  /** The record is written and durable (by the write, or by a synchronous commit that stored the turn's end). */
  written(): void {
    clearTimeout(this.timer);
    if (this.settled) return;
    this.settled = true;
    this.resolveReady();
  }
}
