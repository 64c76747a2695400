import { afterAll, describe, expect, it } from "vitest";
import { HostCallError, SandboxPool, ScriptError } from "./pool.js";

// Wall time far above CPU time: on a loaded machine a busy loop still reaches its CPU limit first.
const limits = { cpuTimeMs: 1500, wallTimeMs: 120_000, memoryMb: 64, maxHostCalls: 3, maxLogLines: 100, maxLogLineBytes: 4096, maxLogBytes: 65536, maxResultBytes: 1 << 20 };
const pool = new SandboxPool(2);
afterAll(() => pool.close());

const run = (source: string, input: unknown = null, host?: (m: string, a: unknown) => Promise<unknown>) =>
  pool.run({ source: `export default async function run(input, ctx) { ${source} }`, input, limits, host });

async function failure(p: Promise<unknown>): Promise<ScriptError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ScriptError);
  return err as ScriptError;
}

describe("QuickJS sandbox", () => {
  it("runs the script contract: input in, JSON out, ctx.log lines collected", async () => {
    const logs: string[] = [];
    const result = await pool.run({
      source: "export default async function run(input, ctx) { ctx.log('items', input.items.length, { a: 1 }); return { total: input.items.reduce((a, b) => a + b, 0) }; }",
      input: { items: [1, 2, 3] },
      limits,
      onLog: (l) => logs.push(l),
    });
    expect(result).toEqual({ total: 6 });
    expect(logs).toEqual(['items 3 {"a":1}']);
  });

  it("sees no host: process, require, fetch, import and constructor chains all fail", async () => {
    expect(await run("return [typeof process, typeof require, typeof fetch, typeof globalThis.Deno, typeof setTimeout];")).toEqual(["undefined", "undefined", "undefined", "undefined", "undefined"]);
    expect(await run("return (function(){}).constructor('return typeof process')();")).toBe("undefined");
    expect(await run("return ({}).constructor.constructor('return this')() === globalThis;")).toBe(true);
    expect(await run("try { return await Object.getPrototypeOf(async function(){}).constructor('return process')(); } catch (e) { return String(e); }")).toMatch(/ReferenceError: 'process' is not defined/);
    expect(await run("return ctx.chat.constructor('return typeof process')();")).toBe("undefined");
    expect((await failure(run("return await import('node:fs');"))).message).toMatch(/Imports are not available/);
    expect((await failure(pool.run({ source: "import fs from 'fs'; export default function run() { return 1 }", input: null, limits }))).message).toMatch(/Imports are not available/);
    expect((await failure(run("return require('child_process');"))).message).toMatch(/require/);
  });

  it("stops an infinite loop at the deadline, including one after an await", async () => {
    const e = await failure(run("while (true) {}"));
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/CPU time limit of 1500 ms/);
    const e2 = await failure(run("await ctx.chat({}); for(;;){}", null, async () => ({ content: "x" })));
    expect(e2.kind).toBe("timeout");
  });

  it("CPU time is CPU time: awaiting the host costs none of it; wall time is wall time", async () => {
    const slowHost = () => new Promise((r) => setTimeout(() => r({ ok: 1 }), 2500));
    // 2.5 s of waiting is over the 1.5 s CPU limit in wall time, and still passes.
    expect(await run("const a = await ctx.chat({ messages: [] }); return a;", null, slowHost)).toEqual({ ok: 1 });
    const never = () => new Promise(() => {});
    const e = await failure(pool.run({ source: "export default async function run(i, ctx) { await ctx.chat({ messages: [] }); }", input: null, limits: { ...limits, wallTimeMs: 500 }, host: never }));
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/wall time limit of 500 ms/);
  });

  it("fails a memory bomb at the memory cap without harming the host", async () => {
    const before = process.memoryUsage().rss;
    // A CPU budget well above what filling 64 MB takes, so a loaded machine still meets the memory cap first.
    const bomb = "export default async function run() { const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length); }";
    const e = await failure(pool.run({ source: bomb, input: null, limits: { ...limits, cpuTimeMs: 20_000 } }));
    expect(e.kind).toBe("memory");
    expect(e.message).toMatch(/memory limit of 64 MB/);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    expect(await run("return 1 + 1;")).toBe(2);
  });

  it("reports a thrown error with its message and line", async () => {
    const e = await failure(pool.run({ source: "export default async function run() {\n  throw new TypeError('no such order');\n}", input: null, limits }));
    expect(e.kind).toBe("script");
    expect(e.message).toMatch(/^TypeError: no such order \(line 2, column \d+\)$/);
  });

  it("proxies ctx.chat to the host and enforces the host call limit", async () => {
    const calls: unknown[] = [];
    const host = async (_m: string, args: unknown) => {
      calls.push(args);
      return { content: `echo ${(args as { messages: { content: string }[] }).messages[0]!.content}`, usage: { total_tokens: 3 } };
    };
    const r = await run("const a = await ctx.chat({ model: 'm', messages: [{ role: 'user', content: input.q }] }); return a;", { q: "hi" }, host);
    expect(r).toEqual({ content: "echo hi", usage: { total_tokens: 3 } });
    expect(calls).toEqual([{ model: "m", messages: [{ role: "user", content: "hi" }] }]);
    const e = await failure(run("for (let i = 0; i < 5; i++) await ctx.chat({ messages: [{ role: 'user', content: 'x' }] }); return 1;", null, host));
    expect(e.message).toMatch(/Host call limit reached \(3 ctx.chat\/ctx.fetch\/ctx.step calls per run\)/);
    // A host error the script can catch.
    const caught = await run("try { await ctx.chat({}); } catch (e) { return 'caught ' + e.message; }", null, async () => {
      throw new HostCallError("bad request");
    });
    expect(caught).toBe("caught bad request");
  });

  it("runs 20 scripts at once while another thread is stuck in a loop", async () => {
    let loopSettled = false;
    // A longer CPU budget than the other tests: under heavy machine load the 20 short runs must
    // still fit inside the loop's lifetime, or the test would prove nothing.
    const loop = failure(pool.run({ source: "export default async function run() { while (true) {} }", input: null, limits: { ...limits, cpuTimeMs: 6000 } })).finally(() => (loopSettled = true));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => run("return input * 2;", i)));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
    expect(loopSettled).toBe(false); // the 20 finished while the loop was still running
    expect((await loop).kind).toBe("timeout");
  });

  it("cuts ctx.log by bytes inside the sandbox: what crosses to the host is within the line and run limits", async () => {
    const got: { line: string; cut?: string }[] = [];
    const caps = { ...limits, maxLogLines: 1000, maxLogLineBytes: 100, maxLogBytes: 1000 };
    // 4 MB lines, a multi-byte character astride the cut, then far more than the run may keep.
    const source = `export default async function run(input, ctx) {
      const big = "x".repeat(4 * 1024 * 1024);
      ctx.log("a".repeat(99) + "é" + big);
      for (let i = 0; i < 200; i++) ctx.log(big);
      ctx.log("after");
      return "ok";
    }`;
    expect(await pool.run({ source, input: null, limits: caps, onLog: (line, cut) => got.push({ line, cut }) })).toBe("ok");
    const bytes = got.map((g) => Buffer.byteLength(g.line, "utf8"));
    expect(Math.max(...bytes)).toBeLessThanOrEqual(100);
    expect(bytes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1000);
    expect(got[0]).toEqual({ line: "a".repeat(99), cut: expect.stringMatching(/line cut at 100 bytes \(SCRIPT_MAX_LOG_LINE_BYTES\)/) });
    expect(got.at(-1)!.cut).toMatch(/at most 1000 bytes of log \(SCRIPT_MAX_LOG_BYTES\)/);
    expect(got.some((g) => g.line === "after")).toBe(false);
  });

  it("validates scripts: syntax errors name the line, a default export is required", async () => {
    await expect(pool.validate("export default async function run(input) {\n  return input +;\n}")).rejects.toThrow(/SyntaxError.*line 2/);
    await expect(pool.validate("function run() {}")).rejects.toThrow(/export default/);
    await expect(pool.validate("export default async function run(input, ctx) { return 1; }")).resolves.toBeUndefined();
  });
});
