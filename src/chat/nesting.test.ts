import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";

/**
 * The free-form JSON Schemas of a request (tool parameters, structured-output schemas) nested
 * deeper than the gateway accepts: a 400 naming the field, counted by the key's rate limit, and
 * nothing sent upstream — never a 500 from serialization or a 503 from a failed upstream call.
 * The bodies are written as text: a client library would overflow serializing them itself.
 */
describe("deeply nested schemas in chat and responses requests", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let key: string;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "a", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "b", UPSTREAM_MAX_RETRIES: "1" },
    });
    const { adminToken } = await createAccount(app.url, app.operatorToken, "deep", "10");
    const agent = (await gql(app.url, adminToken, `mutation { createAgent(input: { name: "D", instructions: "x" }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000) { key } }`, { a: agent })).data!.createApiKey.key;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  /** A JSON Schema nested `depth` levels below its root object, as text. */
  const deepSchema = (depth: number) => `{"type":"object","properties":{"a":${'{"type":"array","items":'.repeat(depth)}{"type":"string"}${"}".repeat(depth)}}}`;
  const model = "provider_a/model-2.5-flash";
  const cases: [string, string, (schema: string) => string, string][] = [
    ["chat tools", "/chat/completions", (s) => `{"model":"${model}","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${s}}}]}`, "tools[0].function.parameters"],
    ["chat response_format", "/chat/completions", (s) => `{"model":"${model}","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":${s}}}}`, "response_format.json_schema.schema"],
    ["responses tools", "/responses", (s) => `{"model":"${model}","input":"x","tools":[{"type":"function","name":"f","parameters":${s}}]}`, "tools[0].parameters"],
    ["responses text.format", "/responses", (s) => `{"model":"${model}","input":"x","text":{"format":{"type":"json_schema","name":"r","schema":${s}}}}`, "text.format.schema"],
  ];
  const post = (path: string, body: string) =>
    fetch(`${app.url}/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });

  it.each(cases)("%s: deeper than 128 levels is 400 invalid_request_error naming the field; counted by the rate limit; nothing goes upstream", async (_name, path, body, param) => {
    const upstreamBefore = fake.requests.length;
    let remaining: number | undefined;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ min: 128, max: 400 }), fc.integer({ min: 400, max: 30_000 })), async (depth) => {
        const r = await post(path, body(deepSchema(depth)));
        const json = (await r.json()) as { error: { type?: string; code?: string; param?: string; message: string } };
        expect(r.status, `depth ${depth}`).toBe(400);
        expect(json.error).toMatchObject({ param });
        expect(json.error.message).toMatch(/nests deeper than 128 levels/);
        const left = Number(r.headers.get("x-ratelimit-remaining-requests"));
        if (remaining !== undefined) expect(left).toBe(remaining - 1);
        remaining = left;
      }),
      { numRuns: 15 },
    );
    expect(fake.requests.length).toBe(upstreamBefore);
  });

  it("a schema just inside the limit still goes through", async () => {
    for (const [name, path, body] of cases) {
      const r = await post(path, body(deepSchema(120)));
      expect(r.status, name).toBe(200);
      await r.arrayBuffer();
    }
  });
});
