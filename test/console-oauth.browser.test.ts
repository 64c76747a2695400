import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAccount, gql } from "./helpers/graphql.js";
import { ensureConsoleBuilt } from "../src/console/build.js";
import { authorizeInBrowser } from "./helpers/oauth-browser.js";
import { authorizeUrl, pkce, register, tokenRequest } from "./helpers/oauth.js";

/**
 * The console lists an OAuth connection (docs/design/oauth.md) among the agent's keys, and deleting it
 * there revokes its tokens at once. Chromium, driven by playwright-core, on the real console.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const REDIRECT = "http://127.0.0.1:41999/cb";

describe("console: OAuth connections under the agent's keys", () => {
  let app: TestApp;
  let browser: Browser;
  let admin: string;
  let agentId: string;

  beforeAll(async () => {
    const [, started] = await Promise.all([ensureConsoleBuilt(), startTestApp()]);
    app = started;
    admin = (await createAccount(app.url, app.operatorToken, "Console OAuth", "10")).adminToken;
    agentId = (await gql(app.url, admin, `mutation { createAgent(input: { name: "Connected" }) { id } }`)).data!.createAgent.id;
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("shows the connection with its client and revokes it", async () => {
    const client = (await register(app.url, { client_name: "Claude test", redirect_uris: [REDIRECT], application_type: "native", token_endpoint_auth_method: "none" })).body.client_id as string;
    const p = pkce();
    const resource = `${app.url}/api/mcp/${agentId}`;
    const { callbackUrl } = await authorizeInBrowser(browser, authorizeUrl(app.url, { client_id: client, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: "S256", resource }), REDIRECT, admin, "Allow");
    const tokens = (await tokenRequest(app.url, { grant_type: "authorization_code", code: callbackUrl.searchParams.get("code")!, redirect_uri: REDIRECT, client_id: client, code_verifier: p.verifier, resource })).body;
    const call = () => fetch(resource, { method: "POST", headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    const first = await call();
    expect(first.status, `${JSON.stringify(tokens)} ${first.headers.get("www-authenticate")}`).toBe(200);

    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(app.url);
    await page.getByLabel("Admin token").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Agents" }).waitFor();
    await page.goto(`${app.url}/#/agents/${agentId}`);
    await page.getByRole("heading", { name: "Connected", level: 1 }).waitFor();
    await page.locator("#keys").getByText("OAuth connection: Claude test").waitFor();
    await page.getByRole("button", { name: "Delete key Claude test (OAuth)" }).click();
    const confirm = page.getByRole("dialog", { name: /Delete key Claude test/ });
    await confirm.getByText("loses access at once").waitFor();
    await confirm.getByRole("button", { name: "Delete key" }).click();
    await confirm.waitFor({ state: "hidden" });
    await page.locator("#keys").getByText("OAuth connection: Claude test").waitFor({ state: "detached" });
    expect((await call()).status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
