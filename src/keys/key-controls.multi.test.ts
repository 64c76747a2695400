import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";

/**
 * Key expiry and per-key spend limits (docs/guides/chat.md) through the OpenAI SDK, on two API instances on
 * one database: an expired key fails on every key route of both instances with both header forms,
 * and 200 concurrent calls never spend more than the key's limit.
 */
describe("key controls across two API instances", () => {
  let a: TestApp;
  let b: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let accountId: string;
  let agentId: string;
  const MODEL = "provider_a/model-2.5-flash";
  const env = () => ({ PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "k", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "k" });
  const createKey = async (args: Record<string, unknown> = {}) => {
    const r = await gql(
      a.url,
      admin,
      `mutation($a: ID!, $e: DateTimeISO, $l: String, $p: SpendLimitPeriod) {
         createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000, expiresAt: $e, spendLimit: $l, spendLimitPeriod: $p) { key apiKey { id expiresAt spendLimit spendLimitPeriod spent } } }`,
      { a: agentId, ...args },
    );
    if (!r.data) throw new Error(JSON.stringify(r.errors));
    return r.data.createApiKey as { key: string; apiKey: { id: string; expiresAt: string | null; spendLimit: string | null; spendLimitPeriod: string | null; spent: string | null } };
  };
  /** The SDK with the key as Bearer, or (the other header form) as X-API-Key. */
  const client = (app: TestApp, key: string, form: "bearer" | "x-api-key") =>
    form === "bearer"
      ? new OpenAI({ apiKey: key, baseURL: `${app.url}/api/v1`, maxRetries: 0 })
      : new OpenAI({ apiKey: "unused", baseURL: `${app.url}/api/v1`, maxRetries: 0, defaultHeaders: { authorization: null, "x-api-key": key } });
  const chat = (c: OpenAI) => c.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "x" }], max_tokens: 10 });
  const keyRow = async (id: string) =>
    (await gql(a.url, admin, `query($a: ID!) { agent(id: $a) { apiKeys { id spent spendLimit spendLimitPeriod expiresAt } } }`, { a: agentId })).data!.agent.apiKeys.find((k: any) => k.id === id);

  beforeAll(async () => {
    fake = await startFakeUpstream();
    a = await startTestApp({ env: env() });
    b = await startTestApp({ env: env(), databaseUrl: a.databaseUrl });
    ({ adminToken: admin, accountId } = await createAccount(a.url, a.operatorToken, "keys", "10"));
    agentId = (await gql(a.url, admin, `mutation { createAgent(input: { name: "k", instructions: "Be brief." }) { id } }`)).data!.createAgent.id;
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it("an expired key answers 401 invalid_api_key saying it expired, on every key route of both instances, both header forms", async () => {
    const { key, apiKey } = await createKey();
    expect(apiKey.expiresAt).toBeNull();
    // Warm both instances' caches with both header forms, and keep a stored response to fetch later.
    const stored: any = await client(a, key, "bearer").responses.create({ model: MODEL, input: "hi" });
    for (const app of [a, b]) for (const form of ["bearer", "x-api-key"] as const) expect((await chat(client(app, key, form))).model).toBe(MODEL);
    // The expiry is set by an update on instance A (NOTIFY eviction), a moment ahead.
    const expiresAt = new Date(Date.now() + 1500);
    const upd = await gql(a.url, admin, `mutation($id: ID!, $e: DateTimeISO) { updateApiKey(id: $id, expiresAt: $e) { expiresAt rateLimitPerMinute } }`, { id: apiKey.id, e: expiresAt.toISOString() });
    expect(upd.data!.updateApiKey).toEqual({ expiresAt: expiresAt.toISOString(), rateLimitPerMinute: 100000 });
    // Still usable until then (caches were refreshed, not broken).
    for (const app of [a, b]) {
      const r = await chat(client(app, key, "x-api-key")).catch((e) => e);
      if (Date.now() < expiresAt.getTime() - 200) expect(r.model).toBe(MODEL);
    }
    while (Date.now() <= expiresAt.getTime()) await new Promise((r) => setTimeout(r, 50));
    for (const app of [a, b]) {
      for (const form of ["bearer", "x-api-key"] as const) {
        const c = client(app, key, form);
        const attempts = [chat(c), c.models.list(), c.responses.create({ model: MODEL, input: "hi" }), c.responses.retrieve(stored.id)];
        for (const e of await Promise.all(attempts.map((p) => (p as Promise<unknown>).catch((err) => err)))) {
          expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
          expect((e as any).code).toBe("invalid_api_key");
          expect((e as any).message).toMatch(/expired/);
        }
        const streamed = await c.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "x" }], stream: true }).catch((err) => err);
        expect(streamed).toBeInstanceOf(OpenAI.AuthenticationError);
      }
    }
    // Taking the expiry away revives it everywhere at once.
    await gql(a.url, admin, `mutation($id: ID!) { updateApiKey(id: $id, expiresAt: null) { id } }`, { id: apiKey.id });
    for (const app of [a, b]) expect((await chat(client(app, key, "bearer"))).model).toBe(MODEL);
  });

  it("refuses a key expired behind the caches' back (no NOTIFY) on the very next request of every route", async () => {
    const { key, apiKey } = await createKey();
    const stored: any = await client(b, key, "bearer").responses.create({ model: MODEL, input: "hi" });
    expect((await chat(client(b, key, "x-api-key"))).model).toBe(MODEL); // B's cache holds the key, no expiry
    // Only the row changes: no instance hears of it, so only the use-time checks can catch it.
    await a.runtime.pool.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [apiKey.id]);
    const c = client(b, key, "bearer");
    const attempts = [chat(c), c.models.list(), c.responses.create({ model: MODEL, input: "hi" }), c.responses.retrieve(stored.id)];
    for (const e of await Promise.all(attempts.map((p) => (p as Promise<unknown>).catch((err) => err)))) {
      expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((e as any).message).toMatch(/expired/);
    }
  });

  it("refuses a past or unparsable expiry and a bad limit with BAD_USER_INPUT naming the field", async () => {
    const past = await gql(a.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", expiresAt: "2001-01-01T00:00:00.000Z") { key } }`, { a: agentId });
    expect(past.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
    expect(past.errors![0]!.message).toMatch(/expiresAt/);
    const garbage = await gql(a.url, admin, `mutation($a: ID!, $e: DateTimeISO) { createApiKey(agentId: $a, name: "k", expiresAt: $e) { key } }`, { a: agentId, e: "next tuesday" });
    expect(garbage.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
    expect(garbage.errors![0]!.message).toMatch(/DateTimeISO|expiresAt|\$e/);
    for (const l of ["-1", "0", "abc", "1.1234567"]) {
      const r = await gql(a.url, admin, `mutation($a: ID!, $l: String) { createApiKey(agentId: $a, name: "k", spendLimit: $l) { key } }`, { a: agentId, l });
      expect(r.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
      expect(r.errors![0]!.message).toMatch(/spendLimit/);
    }
  });

  it("counts only holds the balance took: with the balance binding under 200 concurrent calls on two instances, spent equals the answered calls", async () => {
    // The account covers about 20 worst-case holds; the key's limit is far above that.
    const poor = await createAccount(a.url, a.operatorToken, "poor-limited", "0.00074");
    const agent = (await gql(a.url, poor.adminToken, `mutation { createAgent(input: { name: "p", instructions: "You are Ada." }) { id } }`)).data!.createAgent.id;
    const created = await gql(a.url, poor.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000, spendLimit: "10", spendLimitPeriod: TOTAL) { key apiKey { id } } }`, { a: agent });
    const { key, apiKey } = created.data!.createApiKey;
    const clients = [client(a, key, "bearer"), client(b, key, "x-api-key")];
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(clients[i % 2]!).catch((e) => e)));
    const ok = results.filter((r) => r?.object === "chat.completion").length;
    const refused = results.filter((r) => r instanceof OpenAI.APIError && r.status === 402);
    expect(ok + refused.length).toBe(200);
    expect(refused.length).toBeGreaterThan(0);
    for (const e of refused) expect((e as any).code).toBe("insufficient_balance");
    const { rows } = await a.runtime.pool.query(`select spent_micros from api_key_spend where api_key_id = $1`, [apiKey.id]);
    expect(Number(rows[0].spent_micros)).toBe(ok * 11);
  });

  it("starts each UTC day afresh for a DAY limit: yesterday's spend does not count today", async () => {
    const { key, apiKey } = await createKey({ l: "0.0001", p: "DAY" });
    // Yesterday (UTC) the key spent its whole limit.
    await a.runtime.pool.query(`insert into api_key_spend (api_key_id, period_start, spent_micros) values ($1, date_trunc('day', now(), 'UTC') - interval '1 day', 100)`, [apiKey.id]);
    expect((await keyRow(apiKey.id)).spent).toBe("0.000000");
    expect((await chat(client(b, key, "bearer"))).model).toBe(MODEL);
    expect((await keyRow(apiKey.id)).spent).toBe("0.000011");
    // The same spend dated today is what refuses.
    await a.runtime.pool.query(`update api_key_spend set spent_micros = 100 where api_key_id = $1 and period_start = date_trunc('day', now(), 'UTC')`, [apiKey.id]);
    const refused = await chat(client(a, key, "bearer")).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused.code).toBe("key_spend_limit_exceeded");
  });

  it("never spends more than a key's limit under 200 concurrent calls on two instances; the rest get 402 key_spend_limit_exceeded; another key is unaffected", async () => {
    const limited = await createKey({ l: "0.0002", p: "DAY" });
    expect(limited.apiKey).toMatchObject({ spendLimit: "0.000200", spendLimitPeriod: "DAY", spent: "0.000000" });
    const other = await createKey();
    const clients = [client(a, limited.key, "bearer"), client(b, limited.key, "x-api-key")];
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(clients[i % 2]!).catch((e) => e)));
    const ok = results.filter((r) => r?.object === "chat.completion").length;
    const refused = results.filter((r) => r instanceof OpenAI.APIError && r.status === 402);
    expect(ok + refused.length).toBe(200);
    expect(ok).toBeGreaterThan(0);
    for (const e of refused) expect((e as any).code).toBe("key_spend_limit_exceeded");
    // Settled: what the key spent is exactly its answered calls (11 micro-USD each), within the limit.
    const row = await keyRow(limited.apiKey.id);
    expect(Number(row.spent) * 1e6).toBeLessThanOrEqual(200);
    expect(Math.round(Number(row.spent) * 1e6)).toBe(ok * 11);
    const { rows } = await a.runtime.pool.query(`select -coalesce(sum(amount_micros), 0)::bigint as spent from ledger_entries where api_key_id = $1`, [limited.apiKey.id]);
    expect(Number(rows[0].spent)).toBe(ok * 11);
    // The account still has money: another key of it answers.
    expect((await chat(client(b, other.key, "bearer"))).model).toBe(MODEL);
    // Raising the limit takes effect on the very next request, on the other instance too.
    await gql(a.url, admin, `mutation($id: ID!) { updateApiKey(id: $id, spendLimit: "1") { spendLimit spendLimitPeriod } }`, { id: limited.apiKey.id });
    expect((await chat(client(b, limited.key, "bearer"))).model).toBe(MODEL);
    const balance = await a.runtime.pool.query(`select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s from accounts where id = $1`, [accountId]);
    expect(Number(balance.rows[0].s)).toBe(Number(balance.rows[0].b));
  });
});
