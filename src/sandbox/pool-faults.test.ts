import { afterAll, describe, expect, it } from "vitest";
import { SandboxPool, ScriptError } from "./pool.js";

/**
 * No job can take the pool (and with it the worker process) down: input that cannot be serialized,
 * output nested past the limit, a thread that dies. Each fails its own run; the next run works.
 */
const limits = { cpuTimeMs: 5000, wallTimeMs: 30_000, memoryMb: 64, maxHostCalls: 3, maxLogLines: 100, maxLogLineBytes: 4096, maxLogBytes: 65536, maxResultBytes: 1 << 20 };
const pool = new SandboxPool(1);
afterAll(() => pool.close());

const source = (body: string) => `export default async function run(input, ctx) { ${body} }`;

function deeplyNested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe("sandbox pool under hostile jobs", () => {
  it("a queued job whose input overflows serialization fails alone, even when it is started from another job's completion", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      // The single thread is busy, so the hostile job waits and is started from the first one's result message.
      const first = pool.run({ source: source("let x = 0; for (let i = 0; i < 2e6; i++) x += i; return x;"), input: null, limits });
      const hostile = pool.run({ source: source("return 1;"), input: deeplyNested(1_000_000), limits });
      const after = pool.run({ source: source("return input.ok;"), input: { ok: true }, limits });
      await expect(first).resolves.toBeTypeOf("number");
      const err = await hostile.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ScriptError);
      await expect(after).resolves.toBe(true);
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("a result nested past the limit fails its run with a clear error", async () => {
    const err = await pool.run({ source: source("let v = 1; for (let i = 0; i < 1000; i++) v = [v]; return v;"), input: null, limits }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ScriptError);
    expect((err as Error).message).toMatch(/deeper than 128 levels/);
    await expect(pool.run({ source: source("return 2;"), input: null, limits })).resolves.toBe(2);
  });
});
