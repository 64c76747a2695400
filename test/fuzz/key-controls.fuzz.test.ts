import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { SUPPORTED_MODELS } from "../../src/config/models.js";
import { jsonValue, modelId, oddString } from "./arbitraries.js";

/**
 * Hostile values for the key and model controls of issue 20 (expiresAt, spendLimit,
 * spendLimitPeriod, fallbackModels) through GraphQL variables: every refusal is BAD_USER_INPUT
 * (never a 500 or INTERNAL_SERVER_ERROR), and whatever is accepted is valid when read back.
 * FUZZ_SEED reproduces a run; FUZZ_RUNS scales it.
 */
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Math.max(20, Math.round(Number(process.env.FUZZ_RUNS ?? 1200) / 8));

const dateLike = fc.oneof(
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15) }).map((d) => (Number.isNaN(d.getTime()) ? "Invalid Date" : d.toISOString())),
  fc.date({ min: new Date(Date.now() + 3_600_000), max: new Date("2200-01-01"), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom("2030-02-30T00:00:00Z", "2030-13-01T00:00:00Z", "+275760-09-13T00:00:00.000Z", "2030-01-01", "2030-01-01T00:00:00", "tomorrow", "0", "1e999", "2030-01-01T25:00:00Z"),
  fc.integer(),
  fc.double(),
  oddString,
  jsonValue,
);
const usdLike = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 19n }).map((n) => `${n / 1_000_000n}.${(n % 1_000_000n).toString().padStart(6, "0")}`),
  fc.constantFrom("0", "-1", "1e3", "0.0000001", "999999999999.999999", "9999999999999", " 5 ", "5.", ".5", "NaN", "Infinity", "0x10", "1_000"),
  fc.integer().map(String),
  oddString,
  jsonValue,
);
const periodLike = fc.oneof(fc.constantFrom("DAY", "MONTH", "TOTAL", "day", "WEEK", "", null), oddString, jsonValue);
const modelList = fc.oneof(fc.array(modelId, { maxLength: 10 }), fc.array(fc.constantFrom(...SUPPORTED_MODELS), { maxLength: 9 }), jsonValue);

describe("fuzz: key controls and fallback models over GraphQL", () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let keyId: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "fuzz-keys"));
    agentId = (await gql(app.url, admin, `mutation { createAgent(input: { name: "f" }) { id } }`)).data!.createAgent.id;
    keyId = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "f") { apiKey { id } } }`, { a: agentId })).data!.createApiKey.apiKey.id;
    console.log(`[fuzz key controls] seed ${SEED}, ${RUNS} runs per property`);
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Every error is BAD_USER_INPUT; returns the data when there was none. */
  const onlyBadInput = (r: Awaited<ReturnType<typeof gql>>, what: unknown) => {
    expect(r.status, JSON.stringify(what)).toBeLessThan(500);
    for (const e of r.errors ?? []) expect(e.extensions?.code, `${JSON.stringify(what).slice(0, 300)} → ${e.message}`).toBe("BAD_USER_INPUT");
    return r.errors ? undefined : r.data;
  };

  it("createApiKey / updateApiKey: dates, limits and periods get BAD_USER_INPUT or a valid key", async () => {
    const controls = fc.record({ e: dateLike, l: usdLike, p: periodLike }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(controls, fc.boolean(), async (v, update) => {
        const r = update
          ? await gql(app.url, admin, `mutation($id: ID!, $e: DateTimeISO, $l: String, $p: SpendLimitPeriod) { k: updateApiKey(id: $id, expiresAt: $e, spendLimit: $l, spendLimitPeriod: $p) { expiresAt spendLimit spendLimitPeriod spent } }`, { id: keyId, ...v })
          : await gql(app.url, admin, `mutation($a: ID!, $e: DateTimeISO, $l: String, $p: SpendLimitPeriod) { c: createApiKey(agentId: $a, name: "f", expiresAt: $e, spendLimit: $l, spendLimitPeriod: $p) { k: apiKey { expiresAt spendLimit spendLimitPeriod spent } } }`, { a: agentId, ...v });
        const data = onlyBadInput(r, v) as any;
        if (!data) return;
        const k = update ? data.k : data.c.k;
        if (k.expiresAt !== null) expect(new Date(k.expiresAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
        if (k.spendLimit !== null) {
          expect(k.spendLimit).toMatch(/^\d+\.\d{6}$/);
          expect(["DAY", "MONTH", "TOTAL"]).toContain(k.spendLimitPeriod);
          expect(k.spent).toMatch(/^\d+\.\d{6}$/);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("createAgent / updateAgent: fallbackModels get BAD_USER_INPUT or an ordered list of supported, allowed models", async () => {
    const input = fc.record({ f: modelList, allowed: fc.option(fc.array(fc.constantFrom(...SUPPORTED_MODELS), { minLength: 1, maxLength: 7 }), { nil: undefined }) }, { requiredKeys: ["f"] });
    await fc.assert(
      fc.asyncProperty(input, fc.boolean(), async ({ f, allowed }, update) => {
        const i = { fallbackModels: f, ...(allowed ? { allowedModels: allowed, defaultModel: allowed[0] } : {}) };
        const r = update
          ? await gql(app.url, admin, `mutation($id: ID!, $i: UpdateAgentInput!) { a: updateAgent(id: $id, input: $i) { fallbackModels allowedModels } }`, { id: agentId, i })
          : await gql(app.url, admin, `mutation($i: CreateAgentInput!) { a: createAgent(input: $i) { fallbackModels allowedModels } }`, { i: { name: "f", ...i } });
        const data = onlyBadInput(r, i) as any;
        if (!data) return;
        const got: string[] = data.a.fallbackModels;
        expect(new Set(got).size).toBe(got.length);
        for (const m of got) {
          expect(SUPPORTED_MODELS as readonly string[]).toContain(m);
          if (data.a.allowedModels) expect(data.a.allowedModels).toContain(m);
        }
      }),
      { seed: SEED + 1, numRuns: RUNS },
    );
  });
});
