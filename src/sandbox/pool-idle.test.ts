import { afterAll, describe, expect, it } from "vitest";
import { testConfig } from "../../test/helpers/config.js";
import { sandboxPool } from "./index.js";
import { SandboxPool } from "./pool.js";

/**
 * An idle sandbox thread is ended after the pool's idle time (it holds its QuickJS module and the
 * last run's WebAssembly memory for as long as it lives); the next run starts a fresh one. A thread
 * is also replaced after its number of runs (its resident memory grows a little with each).
 */
const limits = { cpuTimeMs: 5000, wallTimeMs: 30_000, memoryMb: 64, maxHostCalls: 3, maxLogLines: 100, maxLogLineBytes: 4096, maxLogBytes: 65536, maxResultBytes: 1 << 20 };
const pool = new SandboxPool(2, 300);
afterAll(() => pool.close());

const run = (n: number) => pool.run({ source: "export default async function run(input) { return input.n * 2; }", input: { n }, limits });

async function until(condition: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe("sandbox pool: idle and worn threads", () => {
  it("ends threads that have had no work for the idle time, and starts fresh ones for the next runs", async () => {
    expect(await Promise.all([run(1), run(2)])).toEqual([2, 4]);
    // (A thread that finished first may already be retiring: the idle time here is short.)
    expect(pool.stats().started).toBeGreaterThan(0);
    await until(() => pool.stats().started === 0);
    expect(pool.stats().started).toBe(0);
    expect(await Promise.all([run(3), run(4)])).toEqual([6, 8]);
    expect(pool.stats().started).toBeGreaterThan(0);
  });

  it("keeps a thread that gets work before its idle time is up", async () => {
    await until(() => pool.stats().started === 0);
    const pool2 = new SandboxPool(1, 60_000);
    try {
      const once = (n: number) => pool2.run({ source: "export default async function run(input) { return input.n; }", input: { n }, limits });
      for (let i = 0; i < 5; i++) expect(await once(i)).toBe(i);
      expect(pool2.stats().started).toBe(1);
    } finally {
      await pool2.close();
    }
  });

  it("replaces a thread after its number of runs; runs keep working across the replacements", async () => {
    const worn = new SandboxPool(1, 60_000, 3);
    try {
      const once = (n: number) => worn.run({ source: "export default async function run(input) { return input.n; }", input: { n }, limits });
      for (let i = 0; i < 7; i++) expect(await once(i)).toBe(i);
      // Runs 1–3 on the first thread, 4–6 on the second, 7 on the third.
      expect(worn.stats()).toMatchObject({ started: 1, spawned: 3 });
    } finally {
      await worn.close();
    }
  });

  it("the process's pool takes both lifetimes from SANDBOX_THREAD_MAX_RUNS and SANDBOX_THREAD_IDLE_SECONDS", async () => {
    const config = testConfig({ SANDBOX_POOL_SIZE: "1", SANDBOX_THREAD_MAX_RUNS: "2", SANDBOX_THREAD_IDLE_SECONDS: "1" });
    const shared = sandboxPool(config);
    try {
      const once = (n: number) => shared.run({ source: "export default async function run(input) { return input.n; }", input: { n }, limits });
      for (let i = 0; i < 5; i++) expect(await once(i)).toBe(i);
      // Runs 1–2, 3–4 and 5 each on their own thread.
      expect(shared.stats()).toMatchObject({ size: 1, spawned: 3 });
      await until(() => shared.stats().started === 0);
      expect(shared.stats().started).toBe(0);
    } finally {
      await shared.close();
    }
  });
});
