import { describe, expect, it } from "vitest";
import { FinishBatcher } from "./finish-batcher.js";

/** The group commit's scheduling alone (the statement is chat.batch.test.ts's): a fake write that records its batches. */
describe("FinishBatcher", () => {
  type Turn = { accountId: string; id: string; bad?: boolean };
  const recorder = () => {
    const batches: string[][] = [];
    let release: () => void = () => {};
    let gate: Promise<void> | undefined;
    const write = async (turns: Turn[]) => {
      batches.push(turns.map((t) => t.id));
      if (gate) await gate;
      // A statement fails as a whole when any of its turns cannot be written.
      if (turns.some((t) => t.bad)) throw new Error(`bad ${turns.find((t) => t.bad)!.id}`);
      return turns.map((t) => `ok ${t.id}`);
    };
    return {
      batches,
      write,
      hold: () => (gate = new Promise((r) => (release = () => ((gate = undefined), r())))),
      release: () => release(),
    };
  };

  it("sends a lone finish at once, queues an account's finishes while one is in flight and sends them together; accounts do not wait for each other", async () => {
    const r = recorder();
    const b = new FinishBatcher<Turn, string>(r.write);
    r.hold();
    const first = b.finish({ accountId: "a", id: "a1" });
    const queued = ["a2", "a3", "a4"].map((id) => b.finish({ accountId: "a", id }));
    const other = b.finish({ accountId: "b", id: "b1" });
    expect(r.batches).toEqual([["a1"], ["b1"]]);
    r.release();
    expect(await first).toBe("ok a1");
    expect(await other).toBe("ok b1");
    expect(await Promise.all(queued)).toEqual(["ok a2", "ok a3", "ok a4"]);
    expect(r.batches).toEqual([["a1"], ["b1"], ["a2", "a3", "a4"]]);
    // Idle again: the next one goes at once, alone.
    expect(await b.finish({ accountId: "a", id: "a5" })).toBe("ok a5");
    expect(r.batches.at(-1)).toEqual(["a5"]);
  });

  it("when a batch's statement fails, retries each turn alone: only the turn that cannot be written fails", async () => {
    const r = recorder();
    const b = new FinishBatcher<Turn, string>(r.write);
    r.hold();
    const first = b.finish({ accountId: "a", id: "a1" });
    const rest = [b.finish({ accountId: "a", id: "a2" }), b.finish({ accountId: "a", id: "a3", bad: true }), b.finish({ accountId: "a", id: "a4" })];
    r.release();
    await first;
    const settled = await Promise.allSettled(rest);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual(["ok a2", "bad a3", "ok a4"]);
    expect(r.batches).toEqual([["a1"], ["a2", "a3", "a4"], ["a2"], ["a3"], ["a4"]]);
  });

  it("caps a batch at maxBatch turns", async () => {
    const r = recorder();
    const b = new FinishBatcher<Turn, string>(r.write, 2);
    r.hold();
    const all = ["a1", "a2", "a3", "a4", "a5"].map((id) => b.finish({ accountId: "a", id }));
    r.release();
    await Promise.all(all);
    expect(r.batches).toEqual([["a1"], ["a2", "a3"], ["a4", "a5"]]);
  });
});
