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
  coalesceWrites(res as unknown as ServerResponse);
  return { res, calls };
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

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
