import type { Runtime } from "../runtime/runtime.js";
import { jobEvents } from "./events.js";
import type { JobStatusEvent } from "./store.js";

export const isTerminal = (status: JobStatusEvent["status"]) => status === "done" || status === "failed";

export interface WaitForJobOptions {
  /** Stop waiting at this time (the job keeps running). */
  until: Date;
  /** Called with every status the job takes while waited for, its current one first. */
  onStatus?: (event: JobStatusEvent) => void | Promise<void>;
  /** Stop waiting early (e.g. the client went away). */
  signal?: AbortSignal;
  /** Also stop at this status (besides done and failed), e.g. input_required for a caller that can answer. */
  stopAt?: JobStatusEvent["status"];
}

/**
 * Waits for a job of the account to reach done or failed, or for the deadline, from the same
 * event bus as the `jobStatusChanged` subscription (LISTEN/NOTIFY, so a transition written by any
 * worker is seen by every API instance; a late waiter gets the current state first). Returns the
 * last status seen (terminal, or the state at the deadline); undefined when the job was never
 * seen (unknown, or of another account) before the deadline.
 */
export async function waitForJob(runtime: Runtime, accountId: string, jobId: string, options: WaitForJobOptions): Promise<JobStatusEvent | undefined> {
  const events = jobEvents(runtime, accountId, { jobId })[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<"stop">((resolve) => {
    timer = setTimeout(() => resolve("stop"), Math.max(0, options.until.getTime() - Date.now()));
    onAbort = () => resolve("stop");
    if (options.signal?.aborted) resolve("stop");
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
  let last: JobStatusEvent | undefined;
  try {
    for (;;) {
      const next = await Promise.race([events.next(), stopped]);
      if (next === "stop" || next.done) return last;
      last = next.value;
      await options.onStatus?.(last);
      if (isTerminal(last.status) || last.status === options.stopAt) return last;
    }
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
    await events.return?.();
  }
}
