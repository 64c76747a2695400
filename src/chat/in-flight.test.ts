import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ClientAborted } from "../providers/index.js";
import { InFlightTurns, isShutdownCut } from "./in-flight.js";

/** A turn that waits for its signal (or `until`), then ends as the engine does: aborted, or by throwing ClientAborted. */
const waitingTurn =
  (how: "result" | "throw", until?: Promise<void>) =>
  (signal: AbortSignal): Promise<{ aborted: boolean }> =>
    new Promise((resolve, reject) => {
      const onAbort = () => (how === "throw" ? reject(new ClientAborted()) : resolve({ aborted: true }));
      if (signal.aborted) return onAbort();
      until?.then(() => resolve({ aborted: false }));
      signal.addEventListener("abort", onAbort, { once: true });
    });

describe("InFlightTurns: one signal per turn, fired by the client or by a graceful stop's cut", () => {
  it("the client's abort reaches the turn and stays the client's (not a cut); the client's signal keeps no listener after the turn", async () => {
    const turns = new InFlightTurns();
    const client = new AbortController();
    let seen: AbortSignal | undefined;
    const running = turns.run(client.signal, (signal) => ((seen = signal), waitingTurn("throw")(signal)));
    expect(getEventListeners(client.signal, "abort")).toHaveLength(1);
    client.abort();
    await expect(running).rejects.toBeInstanceOf(ClientAborted);
    expect(seen?.aborted).toBe(true);
    expect(getEventListeners(client.signal, "abort")).toHaveLength(0);
  });

  it("a turn that ends on its own leaves no listener on the client's signal, and a later abort of it touches nothing", async () => {
    const turns = new InFlightTurns();
    const client = new AbortController();
    let seen: AbortSignal | undefined;
    const r = await turns.run(client.signal, (signal) => ((seen = signal), waitingTurn("result", Promise.resolve())(signal)));
    expect(r).toEqual({ aborted: false });
    expect(getEventListeners(client.signal, "abort")).toHaveLength(0);
    client.abort();
    expect(seen?.aborted).toBe(false);
  });

  it("a client signal already aborted aborts the turn at once", async () => {
    const turns = new InFlightTurns();
    const client = new AbortController();
    client.abort();
    await expect(turns.run(client.signal, waitingTurn("throw"))).rejects.toBeInstanceOf(ClientAborted);
  });

  it("cut aborts every turn in flight, with or without a client signal: each fails as a shutdown cut (503), and a turn after the cut is refused", async () => {
    const turns = new InFlightTurns();
    const client = new AbortController();
    const a = turns.run(client.signal, waitingTurn("throw"));
    const b = turns.run(undefined, waitingTurn("result"));
    const settled = Promise.allSettled([a, b]);
    await turns.cut();
    const [ra, rb] = await settled;
    for (const r of [ra, rb]) {
      expect(r.status).toBe("rejected");
      expect(isShutdownCut((r as PromiseRejectedResult).reason)).toBe(true);
    }
    expect(getEventListeners(client.signal, "abort")).toHaveLength(0);
    await expect(turns.run(undefined, waitingTurn("result"))).rejects.toSatisfy(isShutdownCut);
  });
});
