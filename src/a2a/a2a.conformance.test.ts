import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * The A2A v1.0 edge cases the official conformance kit checks, on the wire (raw JSON-RPC): the
 * envelope's own errors (Invalid Request), the card's securitySchemes in each version's shape,
 * required message fields and ListTasks' parameters, push configs under the client's id.
 * No worker runs: the automation agent's jobs stay queued, which is all a task needs here.
 */
describe("A2A conformance edge cases", () => {
  let app: TestApp;
  let admin: string;
  let jobAgent: string;
  let jobKey: string;

  const post = async (body: unknown, version = "1.0") => {
    const r = await fetch(`${app.url}/api/a2a/${jobAgent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${jobKey}`, "A2A-Version": version },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const rpc = (method: string, params: unknown) => post({ jsonrpc: "2.0", id: 3, method, params });
  const message = (extra: Record<string, unknown> = {}) => ({ messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }], ...extra });
  const newTask = async () => (await rpc("SendMessage", { message: message(), configuration: { returnImmediately: true } })).body.result.task.id as string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-conf", "10"));
    jobAgent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "conf-job", script: $s }) { id } }`, { s: "export default async function run(input) { return input; }" })).data!.createAgent.id;
    jobKey = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: jobAgent })).data!.createApiKey.key;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("a request that is not a JSON-RPC 2.0 request object is Invalid Request (-32600), in both versions", async () => {
    const bad: unknown[] = [
      { jsonrpc: "2.0", id: 1, params: {} },
      { jsonrpc: "1.0", id: 1, method: "GetTask", params: { id: "x" } },
      { id: 1, method: "GetTask", params: { id: "x" } },
      { jsonrpc: "2.0", id: 1, method: 5, params: {} },
      { jsonrpc: "2.0", id: 1.5, method: "GetTask", params: { id: "x" } },
      [],
    ];
    for (const body of bad) {
      for (const version of ["1.0", "0.3"]) {
        const r = await post(body, version);
        expect(r.status, `${version} ${JSON.stringify(body)}`).toBe(200);
        expect(r.body.error?.code, `${version} ${JSON.stringify(body)}`).toBe(-32600);
      }
    }
    // The id of a well-formed envelope comes back with the error; a method's own bad params stay -32602.
    expect((await post({ jsonrpc: "2.0", id: "abc", params: {} })).body).toMatchObject({ id: "abc", error: { code: -32600 } });
    expect((await rpc("GetTask", { id: "x", historyLength: -1 })).body.error.code).toBe(-32602);
  });

  it("the card's securitySchemes: v1.0's oneof shape unless v0.3 is asked for", async () => {
    const card = async (headers: Record<string, string>, path = "agent-card.json") => (await fetch(`${app.url}/api/a2a/${jobAgent}/.well-known/${path}`, { headers })).json() as Promise<any>;
    const v1 = { bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "bearer" }) }, apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: "header", name: "X-API-Key" }) } };
    const legacy = { bearer: expect.objectContaining({ type: "http", scheme: "bearer" }), apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }) };
    for (const headers of [{}, { "A2A-Version": "1.0" }]) {
      const c = await card(headers);
      expect(c.securitySchemes, JSON.stringify(headers)).toEqual(v1);
      expect(c.securityRequirements).toHaveLength(2);
      expect(c.supportedInterfaces[0]).toMatchObject({ protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    }
    // No version: v0.3's fields that do not clash ride along, as the reference SDK serves them.
    expect(await card({})).toMatchObject({ url: `${app.url}/api/a2a/${jobAgent}`, protocolVersion: "0.3.0", security: [{ bearer: [] }, { apiKey: [] }] });
    expect((await card({ "A2A-Version": "0.3" })).securitySchemes).toEqual(legacy);
    expect((await card({}, "agent.json")).securitySchemes).toEqual(legacy);
  });

  it("a message without its role, a negative historyLength and a timestamp that is not RFC 3339 are Invalid params", async () => {
    const { role: _, ...roleless } = message();
    const cases: [string, unknown][] = [
      ["SendMessage", { message: roleless, configuration: { returnImmediately: true } }],
      ["SendMessage", { message: message({ role: "ROLE_UNSPECIFIED" }), configuration: { returnImmediately: true } }],
      ["SendMessage", { message: message(), configuration: { returnImmediately: true, historyLength: -1 } }],
      ["ListTasks", { historyLength: -1 }],
      ["ListTasks", { statusTimestampAfter: "-1" }],
      ["ListTasks", { statusTimestampAfter: "2026" }],
      ["ListTasks", { statusTimestampAfter: "yesterday" }],
      ["GetTask", { id: "x", historyLength: -2 }],
    ];
    for (const [method, params] of cases) {
      const r = await rpc(method, params);
      expect(r.body.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
    }
    const legacyRoleless = await post({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { messageId: crypto.randomUUID(), kind: "message", parts: [{ kind: "text", text: "hi" }] } } }, "0.3");
    expect(legacyRoleless.body.error?.code).toBe(-32602);
    // The valid forms still pass.
    await newTask();
    expect((await rpc("ListTasks", { historyLength: 0, statusTimestampAfter: "2020-01-01T00:00:00Z" })).body.result.tasks.length).toBeGreaterThan(0);
    expect((await rpc("ListTasks", { statusTimestampAfter: "2020-01-01T00:00:00.123+02:00" })).body.error).toBeUndefined();
  });
});
