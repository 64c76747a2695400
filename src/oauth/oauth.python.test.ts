import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { python, pythonSignInAndChat } from "../../test/helpers/oauth-python.js";

/**
 * OAuth sign-in (docs/design/oauth.md) end to end: the official Python MCP SDK's OAuthClientProvider (test/clients/mcp_oauth.py),
 * unmodified, signs in to a chat agent's MCP server (401 → resource metadata → server metadata →
 * registration or a Client ID Metadata Document → PKCE with resource → Chromium on the product's
 * pages: admin token, Sign in, Allow → code with iss → token) and calls `chat`. Once with dynamic
 * registration, once with a CIMD served over HTTPS on loopback (fetched under the egress rules).
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const REDIRECT = "http://127.0.0.1:53682/callback";

describe("OAuth sign-in with the Python MCP SDK and Chromium", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let browser: Browser;
  let ca: TestCa;
  let cimd: Server;
  let cimdUrl: string;
  let admin: string;
  let agentId: string;
  let mcpUrl: string;

  beforeAll(async () => {
    ca = makeTestCa(["cimd.test"], ["127.0.0.1"]);
    cimd = createServer({ cert: ca.cert, key: ca.key }, (req, res) => {
      if (req.url !== "/client.json") return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" }).end(
        JSON.stringify({ client_id: cimdUrl, client_name: "CIMD test client", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }),
      );
    });
    await new Promise<void>((r) => cimd.listen(0, "127.0.0.1", r));
    cimdUrl = `https://cimd.test:${(cimd.address() as AddressInfo).port}/client.json`;
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: {
        PROVIDER_A_BASE_URL: fake.url,
        PROVIDER_A_API_KEY: "ka",
        PROVIDER_B_BASE_URL: fake.url,
        PROVIDER_B_API_KEY: "kb",
        EGRESS_ALLOW_PRIVATE: "true",
        EGRESS_CA_FILE: ca.caFile,
        EGRESS_RESOLVE: JSON.stringify({ "cimd.test": "127.0.0.1" }),
      },
    });
    admin = (await createAccount(app.url, app.operatorToken, "Acme OAuth", "10")).adminToken;
    agentId = (await gql(app.url, admin, `mutation { createAgent(input: { name: "Helper" }) { id } }`)).data!.createAgent.id;
    mcpUrl = `${app.url}/api/mcp/${agentId}`;
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await fake?.close();
    cimd?.close();
    ca?.cleanup();
  });

  const signInAndChat = (clientMetadataUrl?: string) => pythonSignInAndChat(browser, { mcpUrl, redirect: REDIRECT, adminToken: admin, clientMetadataUrl });

  const oauthKeys = async () =>
    ((await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { apiKeys { id kind clientName clientId name lastUsedAt } } }`, { id: agentId })).data!.agent.apiKeys as any[]).filter((k) => k.kind === "OAUTH");

  it.skipIf(!existsSync(python))("dynamic registration: signs in through the product's pages and calls chat", async () => {
    const { out, consentText, pageErrors, callback } = await signInAndChat();
    expect(out.tools).toEqual(["chat"]);
    expect(out.is_error).toBe(false);
    expect(out.answer).toBe("Hello from A");
    expect(out.authorize_params).toMatchObject({ resource: mcpUrl, code_challenge_method: "S256" });
    expect(out.refresh_token).toBeTruthy();
    expect(out.expires_in).toBeLessThanOrEqual(3600);
    expect(callback.searchParams.get("iss")).toBe(app.url);
    expect(consentText).toContain("Python MCP test client");
    expect(consentText).toContain("127.0.0.1:53682");
    expect(consentText).toContain("Helper");
    expect(consentText).toContain("Acme OAuth");
    expect(pageErrors).toEqual([]);
    const keys = await oauthKeys();
    expect(keys).toEqual([expect.objectContaining({ kind: "OAUTH", clientName: "Python MCP test client", clientId: out.client_id })]);
  }, 180_000);

  it.skipIf(!existsSync(python))("Client ID Metadata Document over HTTPS: no registration, the document's name on the consent", async () => {
    const { out, consentText, pageErrors } = await signInAndChat(cimdUrl);
    expect(out.client_id).toBe(cimdUrl);
    expect(out.answer).toBe("Hello from A");
    expect(consentText).toContain("CIMD test client");
    expect(pageErrors).toEqual([]);
    expect((await oauthKeys()).map((k) => k.clientId)).toContain(cimdUrl);
  }, 180_000);
});
