import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { authorizeInBrowser } from "../../test/helpers/oauth-browser.js";

/**
 * OAuth sign-in (docs/design/oauth.md) with the official TypeScript SDK's client auth (`@modelcontextprotocol/sdk`,
 * `StreamableHTTPClientTransport` with an `authProvider`), unmodified: connect → 401 → discovery,
 * registration, PKCE with resource → Chromium on the product's pages → `finishAuth(code)` →
 * connect again and call `chat`; then a refresh through the SDK.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const REDIRECT = "http://127.0.0.1:47001/callback";

class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata = { client_name: "TypeScript SDK test client", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  clientInformation = () => this.info;
  saveClientInformation = (i: OAuthClientInformationMixed) => void (this.info = i);
  tokens = () => this.saved;
  saveTokens = (t: OAuthTokens) => void (this.saved = t);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (v: string) => void (this.verifier = v);
  codeVerifier = () => this.verifier;
}

describe("OAuth sign-in with the TypeScript MCP SDK", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let browser: Browser;
  let admin: string;
  let mcpUrl: string;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb" } });
    admin = (await createAccount(app.url, app.operatorToken, "TS OAuth", "10")).adminToken;
    const agentId = (await gql(app.url, admin, `mutation { createAgent(input: { name: "TS helper" }) { id } }`)).data!.createAgent.id;
    mcpUrl = `${app.url}/api/mcp/${agentId}`;
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await fake?.close();
  });

  it("registers, signs in through the product's pages, calls chat, and refreshes", async () => {
    const provider = new MemoryProvider();
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await expect(new Client({ name: "ts-oauth", version: "1" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const url = provider.authorizationUrl!;
    expect(url.searchParams.get("resource")).toBe(mcpUrl);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    const { callbackUrl, pageErrors, consentText } = await authorizeInBrowser(browser, url.href, REDIRECT, admin, "Allow");
    expect(pageErrors).toEqual([]);
    expect(consentText).toContain("TypeScript SDK test client");
    await first.finishAuth(callbackUrl.searchParams.get("code")!);
    expect(provider.saved?.refresh_token).toBeTruthy();

    const client = new Client({ name: "ts-oauth", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    const res = (await client.callTool({ name: "chat", arguments: { message: "hello over oauth" } })) as { content: { type: string; text: string }[]; isError?: boolean };
    expect(res.isError).toBeFalsy();
    expect(res.content[0]!.text).toBe("Hello from A");
    await client.close();

    // An access token the server no longer takes: the SDK refreshes with the rotated refresh token.
    const old = provider.saved!;
    provider.saved = { ...old, access_token: "expired-or-revoked-token-000000000000" };
    const again = new Client({ name: "ts-oauth", version: "1" });
    await again.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    expect((await again.listTools()).tools.map((t) => t.name)).toEqual(["chat"]);
    expect(provider.saved.refresh_token).not.toBe(old.refresh_token);
    await again.close();
  }, 120_000);
});
