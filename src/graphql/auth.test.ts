import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

describe("GraphQL authentication", () => {
  let app: TestApp;
  let adminToken: string;
  beforeAll(async () => {
    app = await startTestApp();
    ({ adminToken } = await createAccount(app.url, app.operatorToken, "acme", "10"));
  });
  afterAll(async () => app?.close());

  it("a valid admin token reads its own account; money is a decimal string", async () => {
    const r = await gql(app.url, adminToken, "{ me { name balance retentionDays relaxSignatureTimestamp } }");
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ me: { name: "acme", balance: "10.000000", retentionDays: 30, relaxSignatureTimestamp: false } });
  });

  it("a missing token, an unknown adm_ token and a wrong-shaped token are 401 UNAUTHENTICATED", async () => {
    for (const token of [undefined, "adm_doesnotexist0000000000000000000000000000", "not-a-token", adminToken.slice(0, -1) + (adminToken.endsWith("x") ? "y" : "x")]) {
      const r = await gql(app.url, token, "{ me { name } }");
      expect(r.status).toBe(401);
      expect(r.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
      expect(r.data ?? null).toBeNull();
    }
  });

  it("the Bearer scheme is case-insensitive", async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `bearer ${adminToken}` },
      body: JSON.stringify({ query: "{ me { name } }" }),
    });
    expect(res.status).toBe(200);
  });

  it("operator mutations need the operator token; account queries need an admin token", async () => {
    const asAdmin = await gql(app.url, adminToken, `mutation { createAccount(name: "x") { adminToken } }`);
    expect(asAdmin.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const asOperator = await gql(app.url, app.operatorToken, "{ me { name } }");
    expect(asOperator.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });

  it("topUpBalance (operator) takes effect at once; bad amounts are BAD_USER_INPUT naming the argument", async () => {
    const me = await gql<{ me: { id: string } }>(app.url, adminToken, "{ me { id } }");
    const accountId = me.data!.me.id;
    const top = await gql(app.url, app.operatorToken, `mutation($a: ID!) { topUpBalance(accountId: $a, amount: "2.5") { balance } }`, { a: accountId });
    expect(top.data).toEqual({ topUpBalance: { balance: "12.500000" } });
    for (const amount of ["-1", "0", "abc", "1.0000001"]) {
      const bad = await gql(app.url, app.operatorToken, `mutation($a: ID!, $m: String!) { topUpBalance(accountId: $a, amount: $m) { balance } }`, { a: accountId, m: amount });
      expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "amount" });
    }
    const missing = await gql(app.url, app.operatorToken, `mutation { topUpBalance(accountId: "acc_nope", amount: "1") { balance } }`);
    expect(missing.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    // The ledger explains the balance: initial 10 + 2.5 top-up.
    const { rows } = await app.runtime.pool.query("select sum(amount_micros)::bigint as s from ledger_entries where account_id = $1", [accountId]);
    expect(Number(rows[0].s)).toBe(12_500_000);
  });

  it("updateAccountSettings changes retention and the signature-timestamp flag", async () => {
    const r = await gql(app.url, adminToken, `mutation { updateAccountSettings(input: { retentionDays: 7, relaxSignatureTimestamp: true }) { retentionDays relaxSignatureTimestamp } }`);
    expect(r.data).toEqual({ updateAccountSettings: { retentionDays: 7, relaxSignatureTimestamp: true } });
    const bad = await gql(app.url, adminToken, `mutation { updateAccountSettings(input: { retentionDays: 0 }) { retentionDays } }`);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "retentionDays" });
  });

  it("limits query depth", async () => {
    const deep = `{ me { ${"a { ".repeat(12)}id${" }".repeat(12)} } }`;
    const r = await gql(app.url, adminToken, deep);
    expect(r.status).toBe(400);
    expect(r.errors?.[0]?.message).toMatch(/exceeds maximum operation depth|depth/i);
  });

  it("malformed requests are 400 without stack traces", async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).not.toMatch(/at .*\.(js|ts):\d+/);
    const syntax = await gql(app.url, adminToken, "{ me { ");
    expect(syntax.status).toBe(400);
    expect(syntax.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(JSON.stringify(syntax.errors)).not.toMatch(/stacktrace/);
  });
});
