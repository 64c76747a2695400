import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { authorizeInBrowser } from "../../test/helpers/oauth-browser.js";
import { authorizeUrl, pkce, register, tokenRequest } from "../../test/helpers/oauth.js";

/**
 * The OAuth server's refusals (docs/design/oauth.md), on two API instances over one database: metadata and challenges, PKCE
 * and resource required, exact redirect URIs (loopback ports excepted), Deny, tokens bound to
 * their agent, refresh rotation with replay revoking the grant, revocation, deleteApiKey on both
 * instances, CIMD to a private address refused, and the rate limits of registration and token.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const REDIRECT = "http://127.0.0.1:41234/cb";

describe("OAuth authorization server: security", () => {
  let app: TestApp;
  let app2: TestApp;
  let browser: Browser;
  let admin: string;
  let agentA: string;
  let agentB: string;
  let clientId: string;

  beforeAll(async () => {
    const env = { OAUTH_REGISTRATIONS_PER_MINUTE: "8", OAUTH_TOKEN_REQUESTS_PER_MINUTE: "20" };
    app = await startTestApp({ env });
    app2 = await startTestApp({ env, databaseUrl: app.databaseUrl, operatorToken: app.operatorToken });
    admin = (await createAccount(app.url, app.operatorToken, "Sec", "10")).adminToken;
    const agent = async (name: string) => (await gql(app.url, admin, `mutation($n: String!) { createAgent(input: { name: $n }) { id } }`, { n: name })).data!.createAgent.id as string;
    agentA = await agent("A");
    agentB = await agent("B");
    const reg = await register(app.url, { client_name: "Sec client", redirect_uris: [REDIRECT], application_type: "native", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] });
    expect(reg.status).toBe(201);
    clientId = reg.body.client_id;
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await browser?.close();
    await app2?.close();
    await app?.close();
  });

  const mcp = (base: string, agentId: string, token?: string) =>
    fetch(`${base}/api/mcp/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
  const a2a = (base: string, agentId: string, token?: string) =>
    fetch(`${base}/api/a2a/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "tsk_none" } }),
    });
  const mcpUrl = (agentId: string) => `${app.url}/api/mcp/${agentId}`;
  const noRedirect = (url: string) => fetch(url, { redirect: "manual" });

  /** A full sign-in for agent A in Chromium; the code exchanged for tokens. */
  const signIn = async (resource = mcpUrl(agentA)) => {
    const p = pkce();
    const url = authorizeUrl(app.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: "S256", resource, scope: "agent" });
    const { callbackUrl, pageErrors } = await authorizeInBrowser(browser, url, REDIRECT, admin, "Allow");
    expect(pageErrors).toEqual([]);
    const code = callbackUrl.searchParams.get("code")!;
    const tokens = await tokenRequest(app.url, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: p.verifier, resource });
    expect(tokens.status).toBe(200);
    return tokens.body as { access_token: string; refresh_token: string; expires_in: number };
  };
  const oauthKeys = async () =>
    ((await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { apiKeys { id kind clientName clientId } } }`, { id: agentA })).data!.agent.apiKeys as any[]).filter((k) => k.kind === "OAUTH");

  it("serves the metadata and challenges of RFC 8414 and RFC 9728", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const m = (await (await fetch(app.url + path)).json()) as any;
      expect(m).toMatchObject({ issuer: app.url, authorization_endpoint: `${app.url}/oauth/authorize`, token_endpoint: `${app.url}/oauth/token`, registration_endpoint: `${app.url}/oauth/register`, revocation_endpoint: `${app.url}/oauth/revoke`, code_challenge_methods_supported: ["S256"], client_id_metadata_document_supported: true, authorization_response_iss_parameter_supported: true });
      expect(m.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
      expect(m.grant_types_supported).not.toContain("implicit");
      expect(m.token_endpoint_auth_methods_supported).toContain("none");
    }
    for (const kind of ["mcp", "a2a"]) {
      const prm = (await (await fetch(`${app.url}/.well-known/oauth-protected-resource/api/${kind}/${agentA}`)).json()) as any;
      expect(prm).toMatchObject({ resource: `${app.url}/api/${kind}/${agentA}`, authorization_servers: [app.url], bearer_methods_supported: ["header"], scopes_supported: ["agent"] });
    }
    const m = await mcp(app.url, agentA);
    expect(m.status).toBe(401);
    expect(m.headers.get("www-authenticate")).toContain(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/api/mcp/${agentA}"`);
    const a = await a2a(app.url, agentA);
    expect(a.status).toBe(401);
    expect(a.headers.get("www-authenticate")).toContain(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/api/a2a/${agentA}"`);
    const bad = await mcp(app.url, agentA, "x".repeat(43));
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("requires PKCE (S256) and a resource naming an agent", async () => {
    const base = { client_id: clientId, redirect_uri: REDIRECT, scope: "agent" };
    const noPkce = await noRedirect(authorizeUrl(app.url, { ...base, resource: mcpUrl(agentA) }));
    expect(noPkce.status).toBe(303);
    expect(new URL(noPkce.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const plain = await noRedirect(authorizeUrl(app.url, { ...base, resource: mcpUrl(agentA), code_challenge: "a".repeat(43), code_challenge_method: "plain" }));
    expect(new URL(plain.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const p = pkce();
    for (const resource of [undefined, `${app.url}/api/v1/chat/completions`, "https://elsewhere.example/api/mcp/x"]) {
      const res = await noRedirect(authorizeUrl(app.url, { ...base, resource, code_challenge: p.challenge, code_challenge_method: "S256" }));
      expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");
    }
  });

  it("matches redirect URIs exactly, loopback ports excepted", async () => {
    const p = pkce();
    const q = { client_id: clientId, code_challenge: p.challenge, code_challenge_method: "S256", resource: mcpUrl(agentA) };
    for (const redirect_uri of ["http://127.0.0.1:41234/cb/x", "http://127.0.0.1:41234/cb?x=1", "http://evil.example/cb", "https://127.0.0.1:41234/cb"]) {
      const res = await noRedirect(authorizeUrl(app.url, { ...q, redirect_uri }));
      expect(res.status).toBe(400); // an error page, never a redirect to an unregistered URI
    }
    const otherPort = await noRedirect(authorizeUrl(app.url, { ...q, redirect_uri: "http://127.0.0.1:5999/cb" }));
    expect(otherPort.status).toBe(303);
    expect(otherPort.headers.get("location")).toMatch(/\/oauth\/interaction\//);
  });

  it("Deny sends access_denied to the client and creates no key", async () => {
    const p = pkce();
    const url = authorizeUrl(app.url, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: "S256", resource: mcpUrl(agentA) });
    const { callbackUrl, consentText } = await authorizeInBrowser(browser, url, REDIRECT, admin, "Deny");
    expect(consentText).toContain("Sec client");
    expect(callbackUrl.searchParams.get("error")).toBe("access_denied");
    expect(callbackUrl.searchParams.get("iss")).toBe(app.url);
    expect(await oauthKeys()).toEqual([]);
  });

  it("binds tokens to their agent; rotates refresh tokens, a replay revoking the grant", async () => {
    const t = await signIn();
    expect(t.expires_in).toBeLessThanOrEqual(3600);
    expect((await mcp(app.url, agentA, t.access_token)).status).toBe(200);
    expect((await a2a(app.url, agentA, t.access_token)).status).toBe(200);
    expect((await mcp(app2.url, agentA, t.access_token)).status).toBe(200);
    const other = await mcp(app.url, agentB, t.access_token);
    expect(other.status).toBe(401);
    expect((await a2a(app.url, agentB, t.access_token)).status).toBe(401);
    // The chat API is no resource of the server: its tokens are not keys there.
    const chat = await fetch(`${app.url}/api/v1/models`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(chat.status).toBe(401);

    const refreshed = await tokenRequest(app.url, { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(t.refresh_token);
    expect((await mcp(app.url, agentA, refreshed.body.access_token)).status).toBe(200);
    const replay = await tokenRequest(app.url, { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    // The replay revoked the grant: its newest tokens and its key are gone, on both instances.
    expect((await tokenRequest(app.url, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: clientId })).body.error).toBe("invalid_grant");
    for (const base of [app.url, app2.url]) expect((await mcp(base, agentA, refreshed.body.access_token)).status).toBe(401);
    expect(await oauthKeys()).toEqual([]);
  });

  it("revocation (RFC 7009) and deleteApiKey refuse the tokens at once on both instances", async () => {
    const t = await signIn(`${app.url}/api/a2a/${agentA}`);
    const revoke = await fetch(`${app.url}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token: t.access_token, client_id: clientId }).toString() });
    expect(revoke.status).toBe(200);
    expect((await a2a(app2.url, agentA, t.access_token)).status).toBe(401);

    const u = await signIn();
    for (const base of [app.url, app2.url]) expect((await mcp(base, agentA, u.access_token)).status).toBe(200);
    const [key] = await oauthKeys();
    expect(key).toMatchObject({ clientName: "Sec client", clientId });
    expect((await gql(app2.url, admin, `mutation($id: ID!) { deleteApiKey(id: $id) }`, { id: key.id })).data!.deleteApiKey).toBe(true);
    for (const base of [app.url, app2.url]) {
      const res = await mcp(base, agentA, u.access_token);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    expect((await tokenRequest(app.url, { grant_type: "refresh_token", refresh_token: u.refresh_token, client_id: clientId })).body.error).toBe("invalid_grant");
  });

  it("refuses a client ID metadata document on a private address (EGRESS_ALLOW_PRIVATE off)", async () => {
    const p = pkce();
    for (const client_id of ["https://127.0.0.1:9/client.json", "http://127.0.0.1:9/client.json", "https://10.0.0.1/client.json"]) {
      const res = await noRedirect(authorizeUrl(app.url, { client_id, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: "S256", resource: mcpUrl(agentA) }));
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/client_id metadata document refused/);
    }
  });

  it("rate limits registration and the token endpoint per address (shared by the instances)", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await register(i % 2 ? app.url : app2.url, { redirect_uris: [REDIRECT], application_type: "native", token_endpoint_auth_method: "none" })).status);
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(7);
    let limited: { status: number; body: any } | undefined;
    for (let i = 0; i < 25 && !limited; i++) {
      const r = await tokenRequest(app.url, { grant_type: "refresh_token", refresh_token: "nope", client_id: clientId });
      if (r.status === 429) limited = r;
      else expect(r.status).toBe(400);
    }
    expect(limited?.body.error).toBe("rate_limit_exceeded");
  });
});
