import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

/**
 * Generated hostile scripts (fast-check): each must end its own job `failed` with a clear
 * message, and a well-behaved run going on at the same time must still finish `done`.
 */
const hostile = fc.oneof(
  // A loop after awaits: the CPU limit catches it although the script yielded first.
  fc.integer({ min: 1, max: 3 }).map((k) => `for (let i = 0; i < ${k}; i++) await ctx.step("s" + i, async () => i); while (true) {}`),
  // Memory bombs.
  fc.integer({ min: 10, max: 18 }).map((bits) => `const a = []; for (;;) a.push("x".repeat(${1 << bits}) + a.length);`),
  fc.constant(`let s = "ab"; for (;;) s = s + s;`),
  // Huge returns (over SCRIPT_MAX_RESULT_BYTES, or over the memory cap on the way).
  fc.integer({ min: 70_000, max: 3_000_000 }).map((n) => `return "y".repeat(${n});`),
  fc.integer({ min: 5_000, max: 50_000 }).map((n) => `return Array.from({ length: ${n} }, (_, i) => ({ i, pad: "z".repeat(20) }));`),
  // Deep structures: returned, logged, sent to the host.
  fc.integer({ min: 129, max: 200_000 }).map((d) => `let o = 1; for (let i = 0; i < ${d}; i++) o = [o]; return o;`),
  fc.integer({ min: 1_000, max: 200_000 }).map((d) => `let o = {}; for (let i = 0; i < ${d}; i++) o = { o }; await ctx.chat({ messages: [{ role: "user", content: "x" }], extra: o }); return 1;`),
  // Thrown non-errors, sync and async.
  fc.constantFrom("42", "null", "undefined", "'plain string'", "({ a: 1 })", "Symbol('s')", "[1, 2]").chain((v) =>
    fc.constantFrom(`throw ${v};`, `await Promise.reject(${v});`, `await new Promise((_, rej) => rej(${v}));`),
  ),
  // Recursion.
  fc.constant(`function f(n) { return f(n + 1) + 1; } return f(0);`),
  fc.constant(`const f = async (n) => (await f(n + 1)) + 1; return await f(0);`),
  // Not JSON.
  fc.constant(`const o = {}; o.self = o; return o;`),
);

describe("hostile scripts", () => {
  let app: TestApp;
  let admin: string;

  beforeAll(async () => {
    app = await startTestApp({
      worker: true,
      env: { SCRIPT_CPU_TIME_MS: "1500", SCRIPT_WALL_TIME_MS: "120000", SCRIPT_MEMORY_MB: "32", SCRIPT_MAX_RESULT_BYTES: "65536", SANDBOX_POOL_SIZE: "2" },
    });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "hostile", "10"));
  });
  afterAll(async () => app?.close());

  it("each generated hostile script fails its job with a clear message; a concurrent good run is done", async () => {
    const seed = Number(process.env.FC_SEED ?? 20261124);
    const scripts = fc.sample(hostile, { numRuns: 12, seed });
    process.stderr.write(`[hostile] ${scripts.length} scripts, seed ${seed}\n`);
    const good = await createAgent(app.url, admin, {
      name: "good",
      script: `export default async function run(input, ctx) { let n = 0; for (let i = 0; i < 3; i++) n += await ctx.step("add" + i, async () => i); return { n }; }`,
    });
    const goodTrigger = await createTrigger(app.url, admin, good);
    const runs = await Promise.all(
      scripts.map(async (body) => {
        const agentId = await createAgent(app.url, admin, { name: "hostile", script: `export default async function run(input, ctx) {\n${body}\n}` });
        const t = await createTrigger(app.url, admin, agentId);
        const r = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
        return { body, t, jobId: r.body.job_id as string };
      }),
    );
    const goodRuns = await Promise.all(
      [1, 2, 3].map(async () => (await postWebhook(app.url, goodTrigger.id, "{}", { "x-trigger-secret": goodTrigger.secret })).body.job_id as string),
    );
    for (const r of runs) {
      const status = await waitForJob(app.url, r.jobId, { "x-trigger-secret": r.t.secret }, 240_000);
      expect(status.status, r.body).toBe("failed");
      expect(status.error, r.body).toMatch(/^Script failed: \S.{4,}/s);
      expect(status.error.length, r.body).toBeLessThanOrEqual(4000);
    }
    for (const id of goodRuns) {
      const status = await waitForJob(app.url, id, { "x-trigger-secret": goodTrigger.secret }, 240_000);
      expect(status.status).toBe("done");
    }
  }, 600_000);
});
