import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";

/** Properties that only show across processes: billing under concurrency, revocation and limits on two API instances. */
describe("chat across two API instances on one database", () => {
  let a: TestApp;
  let b: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let agentId: string;
  const env = () => ({ PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "k", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "k" });
  const createKey = async (token: string, agent: string, rateLimitPerMinute?: number) => {
    const r = await gql(a.url, token, `mutation($a: ID!, $r: Int) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: $r) { key apiKey { id } } }`, {
      a: agent,
      r: rateLimitPerMinute ?? null,
    });
    if (!r.data) throw new Error(JSON.stringify(r.errors));
    return r.data.createApiKey as { key: string; apiKey: { id: string } };
  };
  const post = (app: TestApp, key: string, body: Record<string, unknown> = {}) =>
    fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }], max_tokens: 10, ...body }),
    });

  beforeAll(async () => {
    fake = await startFakeUpstream();
    a = await startTestApp({ env: env() });
    b = await startTestApp({ env: env(), databaseUrl: a.databaseUrl });
    ({ adminToken: admin } = await createAccount(a.url, a.operatorToken, "multi", "10"));
    agentId = (await gql(a.url, admin, `mutation { createAgent(input: { name: "m", instructions: "Be brief." }) { id } }`)).data!.createAgent.id;
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it("revokes a deleted key on the very next request on both instances", async () => {
    const { key, apiKey } = await createKey(admin, agentId);
    // Warm both instances' key caches.
    expect((await post(a, key)).status).toBe(200);
    expect((await post(b, key)).status).toBe(200);
    const del = await gql(a.url, admin, `mutation($id: ID!) { deleteApiKey(id: $id) }`, { id: apiKey.id });
    expect(del.data!.deleteApiKey).toBe(true);
    const onB = await post(b, key);
    expect(onB.status).toBe(401);
    expect(((await onB.json()) as any).error.code).toBe("invalid_api_key");
    expect((await post(a, key)).status).toBe(401);
    const models = await new OpenAI({ apiKey: key, baseURL: `${b.url}/api/v1`, maxRetries: 0 }).models.list().catch((e) => e);
    expect(models).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("a deleted key cannot read stored responses on the very next request, even before the NOTIFY arrives", async () => {
    const { key, apiKey } = await createKey(admin, agentId);
    const created = await fetch(`${a.url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "provider_a/model-2.5-flash", input: "keep this", max_output_tokens: 10 }),
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const read = (app: TestApp) => fetch(`${app.url}/api/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
    // Both instances have the key cached now.
    for (const app of [a, b]) expect((await read(app)).status).toBe(200);
    // The row goes without its NOTIFY: what an instance sees while the announcement is still in flight.
    await a.runtime.pool.query("delete from api_keys where id = $1", [apiKey.id]);
    for (const app of [b, a]) {
      const r = await read(app);
      expect(r.status).toBe(401);
      expect(((await r.json()) as any).error.code).toBe("invalid_api_key");
    }
  });

  it("shares one rate limit per key across instances", async () => {
    const { key } = await createKey(admin, agentId, 3);
    const statuses: number[] = [];
    for (const app of [a, b, a, b]) statuses.push((await post(app, key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const r = await post(a, key);
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(r.headers.get("x-ratelimit-limit-requests")).toBe("3");
  });

  it("keeps the balance non-negative under 200 concurrent requests; ledger sum equals balance; the rest get 402", async () => {
    // A balance that covers about 20 worst-case holds of this request.
    const poor = await createAccount(a.url, a.operatorToken, "poor", "0.00074");
    const agent = (await gql(a.url, poor.adminToken, `mutation { createAgent(input: { name: "p", instructions: "You are Ada." }) { id } }`)).data!.createAgent.id;
    const { key } = await createKey(poor.adminToken, agent, 100_000);
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => post(i % 2 ? a : b, key)));
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    const ok = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 402).length;
    expect(ok + refused).toBe(200);
    expect(ok).toBeGreaterThanOrEqual(15);
    expect(refused).toBeGreaterThan(0);
    const { rows } = await a.runtime.pool.query(
      `select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s,
              (select count(*) from ledger_entries where account_id = $1 and kind = 'hold')::int as holds
         from accounts where id = $1`,
      [poor.accountId],
    );
    expect(rows[0].b).toBeGreaterThanOrEqual(0);
    expect(Number(rows[0].s)).toBe(rows[0].b);
    expect(rows[0].holds).toBe(ok);
    // Each answer costs 11 micro-USD at the model's price (11 prompt + 3 completion tokens).
    expect(740 - rows[0].b).toBe(ok * 11);
  });
  it("never overspends with tool calls, tool rounds, streams and responses under concurrency; every charge is the provider's usage", async () => {
    const poor = await createAccount(a.url, a.operatorToken, "poor-tools", "0.002");
    const agent = (await gql(a.url, poor.adminToken, `mutation { createAgent(input: { name: "t", instructions: "Use tools." }) { id } }`)).data!.createAgent.id;
    const { key } = await createKey(poor.adminToken, agent, 100_000);
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const send = (app: TestApp, path: string, body: Record<string, unknown>) =>
      fetch(`${app.url}/api/v1/${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const first = (i: number) =>
      i % 3 === 2
        ? send(i % 2 ? a : b, "responses", { model: "provider_a/model-2.5-flash", input: "weather?", tools: [{ type: "function", ...tools[0]!.function }], stream: true, max_output_tokens: 10 })
        : send(i % 2 ? a : b, "chat/completions", { model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "weather?" }], tools, max_tokens: 10, stream: i % 3 === 0 });
    const invariant = async () => {
      const { rows } = await a.runtime.pool.query(
        `select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s,
                (select count(*) from threads where account_id = $1 and busy_until is not null)::int as busy
           from accounts where id = $1`,
        [poor.accountId],
      );
      expect(rows[0].b).toBeGreaterThanOrEqual(0);
      expect(Number(rows[0].s)).toBe(rows[0].b);
      expect(rows[0].busy).toBe(0);
      return Number(rows[0].b);
    };
    // Round 1: 150 concurrent first turns that end in tool calls.
    const r1 = await Promise.all(Array.from({ length: 150 }, (_, i) => first(i)));
    const s1 = r1.map((r) => r.status);
    await Promise.all(r1.map((r) => r.arrayBuffer()));
    const ok1 = s1.filter((s) => s === 200).length;
    expect(ok1 + s1.filter((s) => s === 402).length).toBe(150);
    expect(ok1).toBeGreaterThanOrEqual(5);
    expect(ok1).toBeLessThan(150);
    // Each answer costs 11 micro-USD at the model's price (11 prompt + 3 completion tokens), tool calls or not.
    expect(2000 - (await invariant())).toBe(ok1 * 11);
    // Round 2: every thread continued at once with only its tool results, streamed or not, on both instances.
    await gql(a.url, a.operatorToken, `mutation($id: ID!) { topUpBalance(accountId: $id, amount: "0.001") { balance } }`, { id: poor.accountId });
    const { rows: open } = await a.runtime.pool.query(
      `select m.thread_id, m.data from messages m join threads t on t.id = m.thread_id where t.account_id = $1 and m.role = 'assistant' and m.data is not null`,
      [poor.accountId],
    );
    expect(open.length).toBe(ok1);
    const r2 = await Promise.all(
      open.map((row, i) =>
        send(i % 2 ? a : b, "chat/completions", {
          model: "provider_a/model-2.5-flash",
          thread_id: row.thread_id,
          messages: row.data.toolCalls.map((c: any) => ({ role: "tool", tool_call_id: c.id, content: "sunny" })),
          tools,
          max_tokens: 10,
          stream: i % 2 === 0,
        }),
      ),
    );
    const s2 = r2.map((r) => r.status);
    const bodies = await Promise.all(r2.map((r) => r.text()));
    const ok2 = s2.filter((s) => s === 200).length;
    expect(ok2 + s2.filter((s) => s === 402).length).toBe(open.length);
    expect(bodies.filter((t, i) => s2[i] === 200).every((t) => t.includes("Tool results"))).toBe(true);
    expect(3000 - (await invariant())).toBe((ok1 + ok2) * 11);
  });
});
