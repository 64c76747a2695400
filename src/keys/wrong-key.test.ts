import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * A wrong credential on every route that takes an agent key says what is wrong with it (issue 32):
 * an admin or operator token ("for /graphql"), an unknown string, another agent's live key on an
 * A2A or MCP URL, an expired key. Each message is for whoever holds what was sent; none names
 * another agent or account.
 */
describe("wrong keys say what is wrong", () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let otherAgentId: string;
  let otherKey: string;
  let expiredKey: string;
  let expiresAt: string;

  beforeAll(async () => {
    app = await startTestApp();
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "wrong-keys", "1"));
    const agent = async (name: string) => (await gql(app.url, admin, `mutation($n: String!) { createAgent(input: { name: $n }) { id } }`, { n: name })).data!.createAgent.id as string;
    agentId = await agent("mine");
    otherAgentId = await agent("other");
    const key = async (a: string, e?: string) =>
      (await gql(app.url, admin, `mutation($a: ID!, $e: DateTimeISO) { createApiKey(agentId: $a, name: "k", expiresAt: $e) { key apiKey { expiresAt } } }`, { a, e: e ?? null })).data!.createApiKey;
    otherKey = (await key(otherAgentId)).key;
    const soon = await key(agentId, new Date(Date.now() + 1000).toISOString());
    expiredKey = soon.key;
    expiresAt = soon.apiKey.expiresAt;
    while (Date.now() <= new Date(expiresAt).getTime()) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(async () => app?.close());

  const ADMIN = /^Admin tokens \(adm_\.\.\.\) are for \/graphql; this endpoint takes an agent key \(a2a_\.\.\.\)$/;
  const OPERATOR = /^Operator tokens \(opr_\.\.\.\) are for \/graphql; this endpoint takes an agent key \(a2a_\.\.\.\)$/;
  const UNKNOWN = /^Invalid API key: no agent key \(a2a_\.\.\.\) matches it/;
  const ANOTHER = /^This API key belongs to another agent/;
  /** The message's pattern without its anchors, to find it inside a header or status line. */
  const inner = (r: RegExp) => r.source.replace(/^\^/, "").replace(/\$$/, "");
  const expired = () => new RegExp(`^This API key expired at ${expiresAt.replace(/[.]/g, "\\.")}`);

  it("chat completions, Responses and models: admin token, operator token, unknown key, expired key", async () => {
    const routes: [string, string, unknown][] = [
      ["POST", "/api/v1/chat/completions", { model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }],
      ["POST", "/api/v1/responses", { model: "provider_a/model-2.5-flash", input: "x" }],
      ["GET", "/api/v1/models", undefined],
    ];
    for (const [method, path, body] of routes) {
      for (const [token, message] of [
        [admin, ADMIN],
        [app.operatorToken, OPERATOR],
        ["a2a_not_a_real_key", UNKNOWN],
        ["sk-something-else", UNKNOWN],
        [expiredKey, expired()],
      ] as [string, RegExp][]) {
        const res = await fetch(`${app.url}${path}`, { method, headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
        expect(res.status, `${path} ${token.slice(0, 4)}`).toBe(401);
        const err = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(err.code).toBe("invalid_api_key");
        expect(err.message, `${path} ${token.slice(0, 4)}`).toMatch(message);
      }
    }
  });

  it("A2A (v1.0 and v0.3) and MCP: the same, and another agent's key; the message is in the JSON-RPC error, the challenge and (A2A) the status line", async () => {
    const cases: [string, RegExp][] = [
      [admin, ADMIN],
      ["a2a_not_a_real_key", UNKNOWN],
      [otherKey, ANOTHER],
      [expiredKey, expired()],
    ];
    const send = { jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", role: "user", messageId: "m1", parts: [{ kind: "text", text: "hi" }] } } };
    for (const version of ["1.0", "0.3"]) {
      for (const [token, message] of cases) {
        const res = await fetch(`${app.url}/api/a2a/${agentId}`, { method: "POST", headers: { "content-type": "application/json", "a2a-version": version, authorization: `Bearer ${token}` }, body: JSON.stringify(send) });
        const what = `A2A ${version} ${token.slice(0, 4)}`;
        expect(res.status, what).toBe(401);
        expect(res.statusText, what).toMatch(new RegExp(`^Unauthorized: ${inner(message)}`));
        expect(res.headers.get("www-authenticate"), what).toMatch(new RegExp(`^Bearer realm="a2a", resource_metadata="[^"]+/.well-known/oauth-protected-resource/api/a2a/[^"]+", error="invalid_token", error_description="${inner(message)}`));
        expect(((await res.json()) as { error: { message: string } }).error.message, what).toMatch(message);
      }
    }
    // Another agent's key on an agent id that does not exist reads the same: ids cannot be probed.
    const nowhere = await fetch(`${app.url}/api/a2a/agt_doesnotexist`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${otherKey}` }, body: JSON.stringify(send) });
    expect(((await nowhere.json()) as { error: { message: string } }).error.message).toMatch(ANOTHER);

    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    for (const [token, message] of cases) {
      const res = await fetch(`${app.url}/api/mcp/${agentId}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        body: JSON.stringify(init),
      });
      const what = `MCP ${token.slice(0, 4)}`;
      expect(res.status, what).toBe(401);
      expect(res.headers.get("www-authenticate"), what).toMatch(new RegExp(`error_description="${inner(message)}`));
      const body = (await res.json()) as { jsonrpc: string; id: null; error: { code: number; message: string; data: { code: string } } };
      expect(body, what).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32001, data: { code: "invalid_api_key" } } });
      expect(body.error.message, what).toMatch(message);
    }
  });
});
