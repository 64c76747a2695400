import { AppError } from "../errors/app-error.js";
import { ClientAborted } from "../providers/index.js";
import { perRuntime } from "../runtime/per-runtime.js";

/** Why a turn was refused or cut by a graceful stop (A2A's failed task says it too). */
export const SHUTTING_DOWN = "The server is shutting down; nothing was charged for what was not answered, retry the request";
const cutErrors = new WeakSet<AppError>();

/** 503 service_unavailable (Retry-After): the error of a turn refused or cut by a graceful stop. */
const shuttingDown = (): AppError => {
  const err = new AppError("service_unavailable", SHUTTING_DOWN, { headers: { "Retry-After": "1" } });
  cutErrors.add(err);
  return err;
};

/**
 * The chat turns this API instance is serving (chat completions, Responses, A2A, MCP), so a
 * graceful stop settles each one before the process exits (issue 17): the HTTP drain lets them
 * finish for up to SHUTDOWN_DRAIN_MS, then `cut` aborts those still waiting on their upstream and
 * waits until each has settled its hold: a turn that answered nothing releases it whole, a stream
 * is saved and billed for what it sent. A cut turn fails with 503 service_unavailable
 * (Retry-After), so its client learns to retry elsewhere; a turn that starts after the cut is
 * refused the same way. (A2A answers a cut turn as a failed task with that message; MCP as the
 * chat tool's error result.)
 */
export class InFlightTurns {
  private readonly turns = new Set<{ controller: AbortController; cut: boolean; settled: Promise<unknown> }>();
  private cutting = false;

  /** Runs one turn with a signal that fires on `cut` (and when `signal`, the client's, fires). */
  async run<T extends { aborted: boolean }>(signal: AbortSignal | undefined, turn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.cutting) throw shuttingDown();
    // One controller, aborted by the client's signal or by `cut`, not AbortSignal.any: a composite
    // signal is tracked through WeakRefs and FinalizationRegistry cells, which young-generation
    // collections do not clear, so every turn's objects were promoted to the old generation and
    // freed only by full collections (docs/design/request-path-cpu.md).
    const controller = new AbortController();
    const onClientAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) controller.abort(signal.reason);
    else signal?.addEventListener("abort", onClientAbort, { once: true });
    const result = turn(controller.signal);
    const entry = { controller, cut: false, settled: result.catch(() => {}) };
    this.turns.add(entry);
    try {
      const value = await result;
      // A stream cut mid-answer was saved and billed for what it sent; its client is told the rest
      // will not come. (A turn whose answer was complete when the cut came is answered as usual.)
      if (value.aborted && entry.cut) throw shuttingDown();
      return value;
    } catch (err) {
      throw err instanceof ClientAborted && entry.cut ? shuttingDown() : err;
    } finally {
      signal?.removeEventListener("abort", onClientAbort);
      this.turns.delete(entry);
    }
  }

  /** Aborts every turn in flight and resolves once each has settled (saved and billed, or released). */
  async cut(): Promise<void> {
    this.cutting = true;
    const turns = [...this.turns];
    for (const t of turns) {
      t.cut = true;
      t.controller.abort();
    }
    await Promise.all(turns.map((t) => t.settled));
  }
}

/** The turns of one API instance, whichever surface runs them (chat, Responses, A2A, MCP): one `cut` settles them all. */
export const inFlightTurns = perRuntime(() => new InFlightTurns());

/** Whether `err` is the error of a turn refused or cut by a graceful stop. */
export const isShutdownCut = (err: unknown): boolean => err instanceof AppError && cutErrors.has(err);
