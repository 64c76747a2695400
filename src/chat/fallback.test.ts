import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { must, newAgent, newTrigger, postWebhook, waitForJob } from "../../test/helpers/ops.js";

/**
 * Model fallbacks and the per-model circuit breaker (docs/guides/chat.md), through the OpenAI SDK: with
 * provider A's upstream down, an agent with a provider B fallback answers from B (streamed and
 * not), billed at B's price; the breaker then skips A without calling it, and once A recovers a
 * probe closes the breaker and answers come from A again.
 */
describe("fallback models and the circuit breaker", () => {
  let app: TestApp;
  let fakeA: FakeUpstream;
  let fakeB: FakeUpstream;
  let admin: string;
  let accountId: string;
  let agentId: string;
  let key: string;
  const A = "provider_a/model-2.5-flash";
  const B = "provider_b/model-sonnet-4-6";
  const client = (k: string) => new OpenAI({ apiKey: k, baseURL: `${app.url}/api/v1`, maxRetries: 0 });
  const ask = (k = key, model = A) => client(k).chat.completions.create({ model, messages: [{ role: "user", content: "x" }], max_tokens: 10 });
  const circuit = async (model: string) => {
    const text = await (await fetch(`${app.url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`model_circuit_state{model="${model}"}`));
    return line ? Number(line.split(" ").at(-1)) : undefined;
  };
  const ledgerMatches = async (account: string) => {
    const { rows } = await app.runtime.pool.query(`select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s from accounts where id = $1`, [account]);
    expect(Number(rows[0].s)).toBe(Number(rows[0].b));
    return Number(rows[0].b);
  };
  const newKey = async (token: string, agent: string) =>
    (await gql(app.url, token, `mutation($a: ID!) { createApiKey(agentId: $a, name: "f", rateLimitPerMinute: 100000) { key } }`, { a: agent })).data!.createApiKey.key as string;

  beforeAll(async () => {
    fakeA = await startFakeUpstream();
    fakeB = await startFakeUpstream();
    app = await startTestApp({
      worker: true,
      env: {
        PROVIDER_A_BASE_URL: fakeA.url,
        PROVIDER_A_API_KEY: "ka",
        PROVIDER_B_BASE_URL: fakeB.url,
        PROVIDER_B_API_KEY: "kb",
        UPSTREAM_MAX_RETRIES: "1",
        MODEL_BREAKER_FAILURES: "3",
        MODEL_BREAKER_WINDOW_MS: "600000",
        MODEL_BREAKER_COOLDOWN_MS: "300",
      },
    });
    ({ adminToken: admin, accountId } = await createAccount(app.url, app.operatorToken, "fallbacks", "10"));
    const created = await gql(app.url, admin, `mutation($f: [String!]) { createAgent(input: { name: "f", fallbackModels: $f }) { id fallbackModels } }`, { f: [B] });
    expect(created.data!.createAgent.fallbackModels).toEqual([B]);
    agentId = created.data!.createAgent.id;
    key = await newKey(admin, agentId);
  });
  afterAll(async () => {
    await app?.close();
    await fakeA?.close();
    await fakeB?.close();
  });

  it("validates fallbackModels against the supported set and allowedModels (BAD_USER_INPUT)", async () => {
    for (const [input, field] of [
      [{ name: "x", fallbackModels: ["provider_a/nope"] }, "fallbackModels"],
      [{ name: "x", fallbackModels: [B, B] }, "fallbackModels"],
      [{ name: "x", allowedModels: [A], fallbackModels: [B] }, "fallbackModels"],
    ] as const) {
      const r = await gql(app.url, admin, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: input });
      expect(r.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
      expect(r.errors![0]!.message).toMatch(field);
    }
    // Narrowing allowedModels below the fallbacks is refused too.
    const narrowed = await gql(app.url, admin, `mutation($id: ID!) { updateAgent(id: $id, input: { allowedModels: ["${A}"] }) { id } }`, { id: agentId });
    expect(narrowed.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
  });

  it("answers from provider B when provider A is down, streamed and not, billed at B's price; the breaker then skips A; A is used again after it recovers", async () => {
    fakeA.outage = 503;
    const before = await ledgerMatches(accountId);
    const first = await ask();
    expect(first.model).toBe(B);
    expect(first.choices[0]!.message.content).toBe("Hello from B");
    // B's usage (12 in, 4 out) at B's price: 12 × 3 + 4 × 15 micro-USD.
    expect(before - (await ledgerMatches(accountId))).toBe(96);

    const stream = await client(key).chat.completions.create({ model: A, messages: [{ role: "user", content: "x" }], stream: true });
    let text = "";
    const models = new Set<string>();
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    expect([...models]).toEqual([B]);
    expect(text).toBe("Hello from B");
    const response = await client(key).responses.create({ model: A, input: "x" });
    expect(response.model).toBe(B);
    expect(response.output_text).toBe("Hello from B");

    // Three failed calls of A opened its breaker: the next turn does not call A at all.
    await expect.poll(() => circuit(A)).toBe(1);
    const callsToA = fakeA.requests.length;
    expect((await ask()).model).toBe(B);
    expect(fakeA.requests.length).toBe(callsToA);
    // A request B would refuse (temperature above 1) does not fall back to it: A's failure, not B's 400.
    const callsToB = fakeB.requests.length;
    const hot = await client(key).chat.completions.create({ model: A, messages: [{ role: "user", content: "x" }], max_tokens: 10, temperature: 1.5 }).catch((e) => e);
    expect(hot).toBeInstanceOf(OpenAI.APIError);
    expect(hot.status).toBe(503);
    expect(fakeB.requests.length).toBe(callsToB);
    const { rows } = await app.runtime.pool.query(`select count(*)::int as open from ledger_entries h where h.account_id = $1 and h.kind = 'hold'
        and not exists (select 1 from ledger_entries r where r.account_id = h.account_id and r.reference = h.reference and r.kind = 'hold_release')`, [accountId]);
    expect(rows[0].open).toBe(0);

    // A recovers: after the cool-down a probe goes to A, answers, and closes the breaker.
    fakeA.outage = undefined;
    await expect.poll(async () => (await ask()).model, { timeout: 20_000, interval: 100 }).toBe(A);
    expect(await circuit(A)).toBe(0);
    expect((await ask()).model).toBe(A);
    await ledgerMatches(accountId);
  });

  it("an automation script's ctx.chat falls back the same way, and the run's audit records each attempt", async () => {
    const script = `export default async function run(input, ctx) {
      const r = await ctx.chat({ model: "provider_a/model-2.5-pro", messages: [{ role: "user", content: "hi" }], max_tokens: 10 });
      return { model: r.model, content: r.content };
    }`;
    const agent = await newAgent(app.url, admin, { name: "script", script, fallbackModels: ["provider_b/model-haiku-4-5-20251001"] });
    const trigger = await newTrigger(app.url, admin, agent);
    fakeA.outage = 503;
    try {
      const jobId = (await postWebhook(app.url, trigger, { n: 1 })).body.job_id;
      const job = await waitForJob(app.url, admin, jobId, 120_000);
      expect(job.status).toBe("DONE");
      expect(job.result).toEqual({ model: "provider_b/model-haiku-4-5-20251001", content: "Hello from B" });
      const audit = (await must(app.url, admin, `query($id: ID!) { job(id: $id) { audit { toolsUsed { kind name status } } } }`, { id: jobId })).job.audit;
      expect(audit.toolsUsed).toEqual([
        { kind: "model", name: "provider_a/model-2.5-pro", status: "upstream_unavailable" },
        { kind: "model", name: "provider_b/model-haiku-4-5-20251001", status: "ok" },
      ]);
    } finally {
      fakeA.outage = undefined;
    }
  }, 150_000);

  it("refuses with 402 when the dearer fallback cannot be covered, and hands every hold back", async () => {
    const poor = await createAccount(app.url, app.operatorToken, "poor", "0.0001");
    const agent = (await gql(app.url, poor.adminToken, `mutation($f: [String!]) { createAgent(input: { name: "p", fallbackModels: $f }) { id } }`, { f: [B] })).data!.createAgent.id;
    const poorKey = await newKey(poor.adminToken, agent);
    fakeA.outage = 500;
    try {
      const e = await ask(poorKey, "provider_a/model-2.0-flash").catch((err) => err);
      expect(e).toBeInstanceOf(OpenAI.APIError);
      expect(e.status).toBe(402);
      expect(e.code).toBe("insufficient_balance");
    } finally {
      fakeA.outage = undefined;
    }
    expect(await ledgerMatches(poor.accountId)).toBe(100);
  });
});
