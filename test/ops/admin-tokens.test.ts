import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { must } from "../helpers/ops.js";

/** createAdminToken / adminTokens / revokeAdminToken across two API instances on one database. */
describe("admin tokens", () => {
  let a: TestApp;
  let b: TestApp;
  let first: string;
  const clients: Client[] = [];
  const socket = (app: TestApp, token: string) => {
    const c = createClient({ url: `${app.url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: `Bearer ${token}` }, lazy: false, retryAttempts: 0, onNonLazyError: () => {} });
    clients.push(c);
    return c;
  };
  const CREATE = `mutation($n: String!) { createAdminToken(name: $n) { token adminToken { id name prefix lastUsedAt createdAt } } }`;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ databaseUrl: a.databaseUrl, operatorToken: a.operatorToken, secretEncryptionKey: a.config.secretEncryptionKey.toString("base64") });
    first = (await createAccount(a.url, a.operatorToken, "acme", "1")).adminToken;
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await b?.close();
    await a?.close();
  });

  it("creates a named token shown once; the list shows name, prefix and last use, never the token", async () => {
    const created = (await must(a.url, first, CREATE, { n: "ci deploys" })).createAdminToken;
    expect(created.token).toMatch(/^adm_/);
    expect(created.adminToken).toMatchObject({ name: "ci deploys", prefix: created.token.slice(0, 8), lastUsedAt: null });
    expect((await gql(b.url, created.token, "{ me { name } }")).data).toEqual({ me: { name: "acme" } });
    const list = await gql(a.url, first, "{ adminTokens { id name prefix lastUsedAt createdAt } }");
    expect(JSON.stringify(list)).not.toContain(created.token);
    const mine = list.data!.adminTokens.find((t: { id: string }) => t.id === created.adminToken.id);
    expect(mine.lastUsedAt).not.toBeNull();
    expect(list.data!.adminTokens.length).toBe(2);
  });

  it("bad names are BAD_USER_INPUT; another account's token id answers NOT_FOUND like an unknown one", async () => {
    for (const n of ["", "   ", "x".repeat(201)]) expect((await gql(a.url, first, CREATE, { n })).errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "name" });
    const other = (await createAccount(a.url, a.operatorToken, "other", "1")).adminToken;
    const otherId = (await must(a.url, other, "{ adminTokens { id } }")).adminTokens[0].id;
    for (const id of [otherId, "adt_nope"]) expect((await gql(a.url, first, `mutation($id: ID!) { revokeAdminToken(id: $id) }`, { id })).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect((await gql(a.url, other, "{ me { name } }")).data).toEqual({ me: { name: "other" } });
  });

  it("revocation: the next request fails on both instances, and open graphql-ws connections on both close with 4403", async () => {
    const { token, adminToken } = (await must(a.url, first, CREATE, { n: "to revoke" })).createAdminToken;
    const sub = `subscription { jobStatusChanged { jobId status } }`;
    const closed = [a, b].map((app) => {
      const c = socket(app, token);
      return new Promise<{ code: number; reason: string }>((resolve) => {
        c.on("closed", (e) => resolve(e as { code: number; reason: string }));
        c.subscribe({ query: sub }, { next: () => {}, error: () => {}, complete: () => {} });
      });
    });
    // Both sockets are up and authenticated before the revocation.
    await Promise.all(clients.slice(-2).map((c) => new Promise<void>((r) => (c.on("connected", () => r()), undefined))));
    expect((await gql(b.url, token, "{ me { name } }")).status).toBe(200);

    expect((await must(a.url, first, `mutation($id: ID!) { revokeAdminToken(id: $id) }`, { id: adminToken.id })).revokeAdminToken).toBe(true);
    for (const app of [a, b]) {
      const r = await gql(app.url, token, "{ me { name } }");
      expect(r.status).toBe(401);
      expect(r.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    }
    for (const e of await Promise.all(closed)) expect(e).toMatchObject({ code: 4403, reason: "Token revoked" });
    // A new socket with the revoked token is refused; the other token still works.
    const again = socket(b, token);
    const refused = await new Promise<{ code?: number }>((resolve) => again.subscribe({ query: sub }, { next: () => {}, error: (e) => resolve(e as { code?: number }), complete: () => resolve({}) }));
    expect(refused.code).toBe(4403);
    expect((await gql(b.url, first, "{ adminTokens { id } }")).data!.adminTokens.map((t: { id: string }) => t.id)).not.toContain(adminToken.id);
  });

  it("a revocation that lands while an instance's LISTEN connection is down closes that token's sockets once it is back", async () => {
    const { token, adminToken } = (await must(a.url, first, CREATE, { n: "revoked while b reconnects" })).createAdminToken;
    const c = socket(b, token);
    const connected = new Promise<void>((r) => (c.on("connected", () => r()), undefined));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      c.on("closed", (e) => resolve(e as { code: number; reason: string }));
      c.subscribe({ query: `subscription { jobStatusChanged { jobId status } }` }, { next: () => {}, error: () => {}, complete: () => {} });
    });
    await connected;
    // Cut the listeners of this database (both instances) and wait until their backends are gone;
    // the revocation commits before the first reconnect (250 ms later), so its NOTIFY reaches nobody.
    const { rows } = await a.runtime.pool.query<{ gone: boolean }>(
      "select pg_terminate_backend(pid, 10000) as gone from pg_stat_activity where datname = current_database() and application_name like 'agw-%-listen'",
    );
    expect(rows.length).toBeGreaterThan(0);
    expect((await must(a.url, first, `mutation($id: ID!) { revokeAdminToken(id: $id) }`, { id: adminToken.id })).revokeAdminToken).toBe(true);
    const outcome = await Promise.race([closed, new Promise<string>((r) => setTimeout(() => r("still open"), 20_000))]);
    expect(outcome).toMatchObject({ code: 4403, reason: "Token revoked" });
  });

  it("a token may revoke itself; its very next request fails", async () => {
    const { token, adminToken } = (await must(a.url, first, CREATE, { n: "self" })).createAdminToken;
    expect((await must(b.url, token, `mutation($id: ID!) { revokeAdminToken(id: $id) }`, { id: adminToken.id })).revokeAdminToken).toBe(true);
    expect((await gql(a.url, token, "{ me { name } }")).status).toBe(401);
  });
});
