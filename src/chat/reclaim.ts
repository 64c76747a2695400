import type { Runtime } from "../runtime/runtime.js";
import { reclaimExpiredTurns } from "../threads/store.js";

/**
 * The periodic reclaim of dead chat turns (docs/design/billing-reservations.md, "A hold whose settle never
 * ran"): every API instance settles, every `holdReclaimIntervalMs` and once at start, the turns
 * whose thread lease expired — their instance crashed between hold and finish, or they outlived
 * their lease. It runs in every API instance, not in one elected place, so it survives any of
 * them crashing (a restarted instance runs it at once); concurrent sweeps skip each other's rows.
 * Returns the stop function.
 */
export function startHoldReclaim(runtime: Runtime): () => void {
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= reclaimExpiredTurns(runtime.pool, {}, runtime.turnReclaim)
      .then((r) => {
        if (r.turns) runtime.log.warn({ turns: r.turns, holds: r.holds, micros: r.micros }, "reclaimed chat turns whose thread lease expired");
      })
      .catch((err: unknown) => runtime.log.warn({ err }, "hold reclaim failed; retried on the next interval"))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(sweep, runtime.config.holdReclaimIntervalMs);
  timer.unref();
  sweep();
  return () => clearInterval(timer);
}
