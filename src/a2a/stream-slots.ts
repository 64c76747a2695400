import { AppError } from "../errors/app-error.js";

/** A refused stream's client may try again after this long (a stream that ends frees its slot). */
const RETRY_AFTER_S = 5;

/**
 * The A2A streams of each key open on this API instance, at most `max` at once
 * (A2A_MAX_STREAMS_PER_KEY). A stream that follows a task holds a LISTEN subscription, a timer
 * and a connection for up to an hour; without a bound one key could hold any number of them.
 * Counted in memory, like the graphql-ws sockets per token: the bound is per instance.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes one of `keyId`'s slots, or throws 429 rate_limit_exceeded; the function returned gives it back (once). */
  take(keyId: string): () => void {
    const n = this.open.get(keyId) ?? 0;
    if (n >= this.max) {
      throw new AppError("rate_limit_exceeded", `This key already has ${this.max} A2A streams open (A2A_MAX_STREAMS_PER_KEY); close one or retry later`, {
        headers: { "retry-after": String(RETRY_AFTER_S) },
        details: { max_streams: this.max },
      });
    }
    this.open.set(keyId, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.open.get(keyId) ?? 1) - 1;
      if (left > 0) this.open.set(keyId, left);
      else this.open.delete(keyId);
    };
  }
}
