import type { ServerResponse } from "node:http";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { coalesceWrites } from "./coalesced-writes.js";

/** What reaches the response underneath: each write, end and header flush, in order. */
function fakeResponse() {
  const calls: { op: "write" | "end" | "headers"; data?: string; cb?: boolean }[] = [];
  const res = {
    headersSent: false,
    writableEnded: false,
    destroyed: false,
    write(chunk: string | Uint8Array, cb?: () => void) {
      res.headersSent = true;
      calls.push({ op: "write", data: Buffer.from(chunk).toString(), cb: typeof cb === "function" });
      return true;
    },
    end(chunk?: string | Uint8Array) {
      res.headersSent = true;
      res.writableEnded = true;
      calls.push({ op: "end", data: chunk === undefined ? "" : Buffer.from(chunk).toString() });
      return res;
    },
    flushHeaders() {
      res.headersSent = true;
      calls.push({ op: "headers" });
    },
  };
  const holds = coalesceWrites(res as unknown as ServerResponse);
  return { res, calls, holds };
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));
function settleable<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((ok, fail) => ((resolve = ok), (reject = fail)));
  return { promise, resolve, reject };
}

describe("coalesceWrites", () => {
  it("the headers, events and end of one turn leave in one write; the SDK's order of calls is kept", async () => {
    const { res, calls } = fakeResponse();
    res.flushHeaders();
    res.write("data: 1\n\n");
    res.write("data: 2\n\n");
    res.end();
    expect(calls).toEqual([{ op: "end", data: "data: 1\n\ndata: 2\n\n" }]);
  });

  it("nothing waits for a later turn: each turn's writes leave at its end, headers alone as a header flush", async () => {
    const { res, calls } = fakeResponse();
    res.flushHeaders();
    await nextTurn();
    expect(calls).toEqual([{ op: "headers" }]);
    res.write("data: 1\n\n");
    res.write(Buffer.from("data: 2\n\n"));
    await nextTurn();
    expect(calls.slice(1)).toEqual([{ op: "write", data: "data: 1\n\ndata: 2\n\n", cb: false }]);
    res.write(": keep-alive\n\n");
    await nextTurn();
    res.end("data: 3\n\n");
    expect(calls.slice(2)).toEqual([
      { op: "write", data: ": keep-alive\n\n", cb: false },
      { op: "end", data: "data: 3\n\n" },
    ]);
  });

  it("a write with a callback, and an end with arguments, pass through at once after what is pending", async () => {
    const { res, calls } = fakeResponse();
    res.write("a");
    res.write("b", () => {});
    (res.end as (c: string, enc: string) => unknown)("c", "utf8");
    expect(calls).toEqual([
      { op: "write", data: "a", cb: false },
      { op: "write", data: "b", cb: true },
      { op: "end", data: "c" },
    ]);
    await nextTurn();
    expect(calls).toHaveLength(3);
  });

  it("a response the client left gets nothing more", async () => {
    const { res, calls } = fakeResponse();
    res.write("a");
    res.destroyed = true;
    expect(res.write("b")).toBe(false);
    await nextTurn();
    expect(calls).toEqual([]);
  });

  it("every response gets the same three functions: none is made for, or holds, one response", () => {
    const a = fakeResponse().res;
    const b = fakeResponse().res;
    for (const m of ["write", "end", "flushHeaders"] as const) {
      expect(a[m], m).toBe(b[m]);
    }
  });

  it("held writes leave when the hold resolves, in one write with what that turn adds, and an end waits for them; the header flush does not wait", async () => {
    const { res, calls, holds } = fakeResponse();
    const record = settleable<void>();
    holds.hold(record.promise);
    res.flushHeaders();
    res.write("data: task\n\n");
    await nextTurn();
    res.write("data: chunk\n\n");
    await nextTurn();
    expect(calls).toEqual([{ op: "headers" }]);
    record.resolve();
    res.end("data: end\n\n");
    expect(calls).toHaveLength(1);
    await nextTurn();
    expect(calls.slice(1)).toEqual([{ op: "end", data: "data: task\n\ndata: chunk\n\ndata: end\n\n" }]);
  });

  it("writes held for a hold that rejects never leave, nor those until `pass`; the header flush and later writes do", async () => {
    const { res, calls, holds } = fakeResponse();
    const record = settleable<void>();
    holds.hold(record.promise);
    res.flushHeaders();
    res.write("data: names the task\n\n");
    record.reject(new Error("not written"));
    await nextTurn();
    res.write("data: names the task too\n\n");
    await nextTurn();
    expect(calls).toEqual([{ op: "headers" }]);
    holds.pass();
    res.write("event: error\n\n");
    res.end();
    expect(calls.slice(1)).toEqual([{ op: "end", data: "event: error\n\n" }]);
  });

  it("a gate's writes join the stream when it passes and are dropped when it fails; writes outside it do not wait", async () => {
    for (const pass of [true, false]) {
      const { res, calls, holds } = fakeResponse();
      const commit = settleable<boolean>();
      res.write("data: task\n\n");
      holds.gate(commit.promise);
      res.write("data: last chunk\n\n");
      res.write("data: completed\n\n");
      holds.gate(undefined);
      res.write(": keep-alive\n\n");
      await nextTurn();
      expect(calls).toEqual([{ op: "write", data: "data: task\n\n: keep-alive\n\n", cb: false }]);
      res.end();
      expect(calls).toHaveLength(1);
      commit.resolve(pass);
      await nextTurn();
      expect(calls.slice(1)).toEqual([{ op: "end", data: pass ? "data: last chunk\n\ndata: completed\n\n" : "" }]);
    }
  });

  it("endWhen ends the response once the gate passes, with its writes; the SDK's own end after it changes nothing", async () => {
    const { res, calls, holds } = fakeResponse();
    const commit = settleable<boolean>();
    holds.gate(commit.promise);
    res.write("data: completed\n\n");
    holds.gate(undefined);
    holds.endWhen(commit.promise);
    await nextTurn();
    expect(calls).toEqual([]);
    commit.resolve(true);
    await nextTurn();
    expect(calls).toEqual([{ op: "end", data: "data: completed\n\n" }]);
    res.end();
    expect(calls).toHaveLength(1);
  });

  it("what leaves is what was written, minus a rejected hold's and a failed gate's writes, in order, ended once (generated schedules)", async () => {
    type Step = { kind: "write"; data: string } | { kind: "turn" } | { kind: "hold" } | { kind: "gate" } | { kind: "ungate" } | { kind: "pass" } | { kind: "settle"; ok: boolean };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("write" as const), data: fc.string({ minLength: 1, maxLength: 4 }) }),
      fc.constant({ kind: "turn" as const }),
      fc.constant({ kind: "hold" as const }),
      fc.constant({ kind: "gate" as const }),
      fc.constant({ kind: "ungate" as const }),
      fc.constant({ kind: "pass" as const }),
      fc.record({ kind: fc.constant("settle" as const), ok: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 20 }), async (steps) => {
        const { res, calls, holds } = fakeResponse();
        // The model: what leaves, in order, with the hold each write waits for (dropped if it rejects).
        type Hold = { p: ReturnType<typeof settleable<void>>; ok?: boolean };
        type Gate = { p: ReturnType<typeof settleable<boolean>>; ok?: boolean; chunks: string[] };
        let out: { data: string; hold?: Hold }[] = [];
        let hold: Hold | undefined;
        let gate: Gate | undefined;
        let gating = false;
        let dropping = false;
        const unsettledHold = () => (hold?.ok === undefined ? hold : undefined);
        const settleHold = (ok: boolean) => {
          const h = hold!;
          h.ok = ok;
          if (ok) h.p.resolve();
          else {
            h.p.reject(new Error("not written"));
            out = out.filter((w) => w.hold !== h);
            dropping = true;
          }
        };
        const settleGate = (ok: boolean) => {
          const g = gate!;
          g.ok = ok;
          g.p.resolve(ok);
          if (ok) out.push(...g.chunks.map((data) => ({ data, hold: unsettledHold() })));
        };
        for (const s of steps) {
          if (s.kind === "write") {
            if (dropping) void 0;
            else if (gating && gate!.ok === undefined) gate!.chunks.push(s.data);
            else if (!gating || gate!.ok) out.push({ data: s.data, hold: unsettledHold() });
            res.write(s.data);
          } else if (s.kind === "turn") await nextTurn();
          else if (s.kind === "hold" && !hold) {
            hold = { p: settleable<void>() };
            holds.hold(hold.p.promise);
          } else if (s.kind === "gate" && !gate) {
            gate = { p: settleable<boolean>(), chunks: [] };
            gating = true;
            holds.gate(gate.p.promise);
          } else if (s.kind === "pass") {
            dropping = false;
            holds.pass();
          } else if (s.kind === "ungate") {
            gating = false;
            holds.gate(undefined);
          } else if (s.kind === "settle") {
            // The hold first, then the gate (in a stream the gate passes only once the hold did).
            if (hold && hold.ok === undefined) settleHold(s.ok);
            else if (gate && gate.ok === undefined) settleGate(s.ok && hold?.ok !== false);
            await Promise.resolve();
          }
        }
        const expected = () => out.map((w) => w.data).join("");
        res.end();
        // Whatever is still open passes (an end waits for it).
        if (hold && hold.ok === undefined) settleHold(true);
        if (gate && gate.ok === undefined) settleGate(true);
        for (let i = 0; i < 3; i++) await nextTurn();
        const data = calls.filter((c) => c.op !== "headers");
        expect(data.map((c) => c.data).join("")).toBe(expected());
        expect(calls.filter((c) => c.op === "end")).toHaveLength(1);
        expect(calls.at(-1)?.op).toBe("end");
      }),
      { numRuns: 300 },
    );
  });

  it("the bytes out are the bytes in, in order, in at most one write per turn (generated schedules)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.string({ minLength: 1 }), { maxLength: 4 }), { minLength: 1, maxLength: 8 }), fc.boolean(), async (turns, headersFirst) => {
        const { res, calls } = fakeResponse();
        if (headersFirst) res.flushHeaders();
        for (const writes of turns) {
          for (const w of writes) res.write(w);
          await nextTurn();
        }
        res.end();
        const data = calls.filter((c) => c.op !== "headers");
        expect(data.map((c) => c.data).join("")).toBe(turns.flat().join(""));
        expect(data.filter((c) => c.op === "write").length).toBeLessThanOrEqual(turns.filter((t) => t.length > 0).length);
        expect(calls.at(-1)?.op).toBe("end");
      }),
      { numRuns: 200 },
    );
  });
});
