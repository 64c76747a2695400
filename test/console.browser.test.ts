/// <reference lib="dom" />
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAccount, gql } from "./helpers/graphql.js";
import { ensureConsoleBuilt } from "../src/console/build.js";
import { projectRoot } from "../src/console/paths.js";

/**
 * The web console end to end: a real API + Temporal worker on a fresh database, the Vite build
 * served at `/`, and Debian's Chromium driven by playwright-core. One story, in order, as an
 * account admin would click through it.
 */

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const SHOTS = join(projectRoot(), "test-artifacts", "console");
const SCRIPT_WITH_ERROR = `export default async function run(input, ctx) {
  return input.n * ;
}`;
const SCRIPT = `export default async function run(input, ctx) {
  ctx.log("got", input.n);
  if (input.fail) throw new Error("boom: " + input.fail);
  return { doubled: input.n * 2 };
}`;

describe("web console in Chromium", () => {
  let app: TestApp;
  let admin: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let agentUrl: string;
  let triggerId: string;
  let firstSecret: string;
  let secret: string;
  let key: string;

  const shot = async (name: string, p: Page = page) => {
    await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };
  const webhook = async (s: string, body: unknown) => {
    const res = await fetch(`${app.url}/api/triggers/${triggerId}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(s ? { "x-trigger-secret": s } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const text = (sel: string) => page.locator(sel).innerText();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
    }
    mkdirSync(SHOTS, { recursive: true });
    const [, started] = await Promise.all([ensureConsoleBuilt(), startTestApp({ worker: true })]);
    app = started;
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });

  afterEach(async ({ task }) => {
    if (task.result?.state === "fail" && page) await shot(`failed-${task.name.replace(/[^\w]+/g, "-").slice(0, 60)}`).catch(() => {});
  });

  afterAll(async () => {
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await app?.close();
  });

  it("serves the console at / without shadowing the API", async () => {
    const html = await fetch(`${app.url}/`);
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('<div id="root">');
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const apiMiss = await fetch(`${app.url}/api/nope`, { headers: { accept: "text/html" } });
    expect(apiMiss.status).toBe(404);
    expect(apiMiss.headers.get("content-type")).toContain("application/json");
    expect((await fetch(`${app.url}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${app.url}/nope`)).status).toBe(404); // API clients keep their JSON 404s
    const deep = await fetch(`${app.url}/agents`, { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(deep.status).toBe(200); // SPA fallback for browser navigations
    expect(deep.headers.get("content-type")).toContain("text/html");
  });

  it("signs in with an admin token and shows the account name and balance", async () => {
    await page.goto(app.url);
    await shot("01-sign-in");
    await page.getByLabel("Admin token").fill("adm_wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "not accepted" }).waitFor();
    await page.getByLabel("Admin token").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Agents" }).waitFor();
    expect(await text("[data-testid=account-name]")).toBe("acme");
    expect(await text("[data-testid=balance]")).toContain("$10.00");
    expect(await page.evaluate(() => sessionStorage.getItem("agw.adminToken"))).toBe(admin);
    await page.getByText("No agents yet.").waitFor();
    await shot("02-agents-empty");
  });

  it("creates an agent with a script; a syntax error from the server names the line", async () => {
    await page.getByRole("link", { name: "New agent" }).click();
    await page.getByLabel("Name").fill("Doubler");
    await page.getByLabel("Instructions").fill("Double the number.");
    await page.getByLabel("Default model").selectOption("provider_b/model-haiku-4-5-20251001");
    await page.getByLabel("Script (optional)").fill(SCRIPT_WITH_ERROR);
    await page.getByRole("button", { name: "Create agent" }).click();
    const err = page.locator(".field-error").filter({ hasText: "SyntaxError" });
    await err.waitFor();
    expect(await err.innerText()).toMatch(/^Line 2: .*line 2/);
    expect(await page.locator(".gutter .error-line").innerText()).toBe("2");
    await shot("03-agent-script-error");
    await page.getByLabel("Script (optional)").fill(SCRIPT);
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { name: "Doubler", level: 1 }).waitFor();
    agentUrl = page.url();
    expect(agentUrl).toMatch(/#\/agents\/agt_/);
    expect(await page.getByLabel("Default model").inputValue()).toBe("provider_b/model-haiku-4-5-20251001");
    expect(await page.locator("text=automation (script)").count()).toBeGreaterThan(0);
    // Edit: a change is saved through updateAgent and survives a reload.
    await page.getByLabel("Instructions").fill("Double the number, always.");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await page.reload();
    await page.getByRole("heading", { name: "Doubler", level: 1 }).waitFor();
    expect(await page.getByLabel("Instructions").inputValue()).toBe("Double the number, always.");
  });

  it("creates a key and shows it exactly once; remember/forget fills the code examples", async () => {
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create an API key" });
    // Focus moves into the dialog, Escape closes it and focus returns to the button that opened it.
    await page.waitForFunction(() => document.activeElement?.tagName === "INPUT" && document.activeElement.closest("dialog[open]") !== null);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    await page.waitForFunction(() => document.activeElement?.textContent === "Create key");
    await page.keyboard.press("Enter");
    await dialog.getByLabel("Key name").fill("production");
    await dialog.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("dialog", { name: "Your new API key" });
    await shown.waitFor();
    expect(await shown.innerText()).toContain("You will not see it again");
    key = await shown.getByRole("textbox", { name: /Key “production”/ }).inputValue();
    expect(key).toMatch(/^a2a_/);
    await shown.getByRole("button", { name: "Copy key" }).click();
    await shown.getByText("Copied", { exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await shot("04-key-shown-once");
    await shown.getByRole("button", { name: "I have copied it" }).click();
    await shown.waitFor({ state: "hidden" });

    // The key works on the chat endpoint …
    const chat = await fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "provider_b/model-haiku-4-5-20251001", messages: [{ role: "user", content: "hi there" }] }),
    });
    expect(chat.status).toBe(200);
    const threadId = ((await chat.json()) as { thread_id: string }).thread_id;

    // … and is never shown again: not after a reload, only its prefix in the list.
    await page.reload();
    await page.getByRole("heading", { name: "Doubler", level: 1 }).waitFor();
    const keysPanel = page.locator("#keys");
    await keysPanel.getByRole("cell", { name: "production", exact: true }).waitFor();
    expect(await keysPanel.innerText()).toContain(key.slice(0, 8));
    expect(await page.content()).not.toContain(key);
    expect(await page.locator("[data-testid=example-curl]").innerText()).toContain("a2a_YOUR_KEY");

    // A second key, remembered in this browser: the examples use it until "forget".
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("dialog", { name: "Create an API key" }).getByLabel("Key name").fill("laptop");
    await page.getByRole("dialog", { name: "Create an API key" }).getByRole("button", { name: "Create key" }).click();
    const shown2 = page.getByRole("dialog", { name: "Your new API key" });
    const key2 = await shown2.getByRole("textbox", { name: /Key “laptop”/ }).inputValue();
    await shown2.getByLabel(/Remember this key in this browser/).check();
    await shown2.getByRole("button", { name: "I have copied it" }).click();
    const curl = await page.locator("[data-testid=example-curl]").innerText();
    expect(curl).toContain(`Authorization: Bearer ${key2}`);
    expect(curl).toContain(`${app.url}/api/v1/chat/completions`);
    await page.getByRole("tab", { name: "Python (openai)" }).click();
    const py = await page.locator("[data-testid=example-python]").innerText();
    expect(py).toContain(`base_url="${app.url}/api/v1"`);
    expect(py).toContain(`extra_body={"thread_id": thread_id}`);
    expect(py).toContain('model="provider_b/model-haiku-4-5-20251001"');
    expect(py).toContain('"tool_call_id": c.id');
    await page.getByRole("tab", { name: "Node.js (openai)" }).click();
    expect(await page.locator("[data-testid=example-node]").innerText()).toContain(`baseURL: "${app.url}/api/v1", apiKey: "${key2}"`);
    await shot("05-agent-keys-examples");

    // Key controls: the laptop key gets an expiry in 30 days and a spend limit of $5 a day.
    await page.getByRole("button", { name: "Edit limits of key laptop" }).click();
    const limits = page.getByRole("dialog", { name: "Limits of key laptop" });
    await limits.getByLabel("Expires").selectOption("30");
    await limits.getByLabel(/Spend limit/).fill("5");
    await limits.getByLabel("Per").selectOption("DAY");
    await limits.getByRole("button", { name: "Save limits" }).click();
    await limits.waitFor({ state: "hidden" });
    const laptopRow = page.locator("#keys tr", { hasText: "laptop" });
    await laptopRow.getByText("of $5 / day").waitFor();
    expect(await laptopRow.innerText()).toMatch(/expires/);
    const laptopKey = (await gql(app.url, admin, `{ agents { apiKeys { name expiresAt spendLimit spendLimitPeriod spent } } }`)).data!.agents.flatMap((a: any) => a.apiKeys).find((k: any) => k.name === "laptop");
    expect(laptopKey).toMatchObject({ spendLimit: "5.000000", spendLimitPeriod: "DAY", spent: "0.000000" });
    expect(new Date(laptopKey.expiresAt).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
    // A2A and MCP: the URLs come from the server (PUBLIC_BASE_URL), the client set-ups carry the remembered key.
    const agentId = /#\/agents\/([^/?]+)/.exec(agentUrl)![1]!;
    const protocols = page.locator("#protocols");
    const mcpUrl = `${app.config.publicBaseUrl}/api/mcp/${agentId}`;
    expect(await protocols.getByRole("textbox", { name: "A2A agent card URL" }).inputValue()).toBe(`${app.config.publicBaseUrl}/api/a2a/${agentId}/.well-known/agent-card.json`);
    expect(await protocols.getByRole("textbox", { name: "MCP server URL" }).inputValue()).toBe(mcpUrl);
    await protocols.getByRole("button", { name: "Copy mcp server url" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(mcpUrl);
    const vscode = JSON.parse((await page.locator("[data-testid=protocol-vscode]").innerText()).replace(/^\/\/.*\n/, ""));
    expect(vscode.servers.doubler).toEqual({ type: "http", url: mcpUrl, headers: { Authorization: `Bearer ${key2}` } });
    await protocols.getByRole("tab", { name: "MCP: Python (mcp)" }).click();
    expect(await page.locator("[data-testid=protocol-python]").innerText()).toContain(`call_tool("run", {"input"`);
    await protocols.getByRole("tab", { name: "A2A: Python (a2a-sdk)" }).click();
    expect(await page.locator("[data-testid=protocol-a2a]").innerText()).toContain(`create_client("${app.config.publicBaseUrl}/api/a2a/${agentId}"`);
    await shot("05b-agent-protocols");
    await page.getByRole("button", { name: "Forget this key" }).click();
    expect(await page.locator("[data-testid=example-node]").innerText()).toContain("a2a_YOUR_KEY");
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("agw.")).length)).toBe(0);

    // Delete with confirmation revokes at once.
    await page.getByRole("button", { name: "Delete key laptop" }).click();
    const confirm = page.getByRole("dialog", { name: /Delete key laptop/ });
    await confirm.getByRole("button", { name: "Delete key" }).click();
    await confirm.waitFor({ state: "hidden" });
    await page.locator("#keys").getByRole("cell", { name: "laptop", exact: true }).waitFor({ state: "detached" });
    const revoked = await fetch(`${app.url}/api/v1/models`, { headers: { authorization: `Bearer ${key2}` } });
    expect(revoked.status).toBe(401);

    // The thread of the chat call above is readable in the console.
    await page.goto(`${app.url}/#/threads/${threadId}`);
    await page.getByRole("heading", { name: "Thread" }).waitFor();
    await page.locator(".message.role-user").filter({ hasText: "hi there" }).waitFor();
    await page.locator(".message.role-assistant").first().waitFor();
    await shot("06-thread");
  });

  it("creates a trigger: webhook URL, secret and test command, each copyable", async () => {
    await page.goto(agentUrl);
    await page.locator("#agent-triggers").getByRole("button", { name: "Create trigger" }).click();
    const dialog = page.getByRole("dialog", { name: "Create a trigger" });
    await dialog.getByLabel("Description (optional)").fill("Orders from the shop");
    await dialog.getByRole("button", { name: "Create trigger" }).click();
    const created = page.getByRole("dialog", { name: "Trigger created" });
    await created.waitFor();
    const url = await created.getByRole("textbox", { name: "Webhook URL" }).inputValue();
    firstSecret = await created.getByRole("textbox", { name: "Secret", exact: true }).inputValue();
    expect(url).toMatch(/\/api\/triggers\/trg_[^/]+\/webhook$/);
    expect(firstSecret).toMatch(/^whsec_/);
    expect(await created.locator("pre[aria-label='Test command']").innerText()).toContain(`x-trigger-secret: ${firstSecret}`);
    await created.getByRole("button", { name: "Copy test command" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(url);
    await shot("07-trigger-created");
    await created.getByRole("button", { name: "Open the trigger" }).click();
    await page.getByRole("heading", { name: "Orders from the shop", level: 1 }).waitFor();
    triggerId = /#\/triggers\/(trg_[^/?]+)/.exec(page.url())![1]!;
    secret = firstSecret;
    await page.getByText("No runs yet.").waitFor();
  });

  it("Send test: “Waiting for result...”, then the script's result, live in the log", async () => {
    const editor = page.getByRole("textbox", { name: "JSON payload" });
    await editor.fill('{"n": 21');
    await page.getByText(/Not valid JSON/).waitFor();
    await page.getByRole("button", { name: "Send test" }).click();
    await page.getByRole("alert").filter({ hasText: "not valid JSON" }).waitFor();
    expect(await page.getByText("1 MB limit").count()).toBe(1);
    await editor.fill('{"n": 21}');
    await page.getByRole("button", { name: "Send test" }).click();
    await page.getByText("Waiting for result...").waitFor();
    const result = page.locator("[data-testid=test-result-json]");
    await result.waitFor();
    expect(JSON.parse(await result.innerText())).toEqual({ doubled: 42 });
    expect(await text("[data-testid=test-result]")).toMatch(/done/);
    expect(await text("[data-testid=test-result]")).toContain("got 21");
    await page.locator("[data-testid=logs] tbody tr").filter({ hasText: "done" }).first().waitFor();
    await shot("08-trigger-test-result");
  });

  it("deactivate: the badge shows and an outside webhook is rejected; activate accepts again", async () => {
    await page.getByRole("switch").click();
    await page.locator("[data-testid=trigger-state] .badge.inactive").filter({ hasText: "inactive" }).waitFor();
    expect(await page.getByRole("switch").getAttribute("aria-checked")).toBe("false");
    const rejected = await webhook(secret, { n: 1 });
    expect(rejected.status).toBe(403);
    expect(rejected.body.error.code).toBe("trigger_inactive");
    await shot("09-trigger-inactive");
    await page.goto(`${app.url}/#/triggers`);
    await page.getByRole("row", { name: /Orders from the shop/ }).getByText("inactive").waitFor();
    await shot("10-triggers-global-list");
    await page.getByRole("link", { name: "Orders from the shop" }).click();
    await page.getByRole("switch").click();
    await page.locator("[data-testid=trigger-state] .badge.inactive").waitFor({ state: "detached" });
    expect((await webhook(secret, { n: 2 })).status).toBe(202);
  });

  it("regenerate the secret: the 24-hour notice, and both the old and new secrets work", async () => {
    await page.getByRole("button", { name: "Regenerate secret…" }).click();
    const confirm = page.getByRole("dialog", { name: "Regenerate the secret?" });
    expect(await confirm.innerText()).toContain("24 hours");
    await confirm.getByRole("button", { name: "Regenerate" }).click();
    const notice = page.locator("[data-testid=grace-notice]");
    await notice.waitFor();
    expect(await notice.innerText()).toMatch(/old secret keeps working for 24 hours, until/);
    const secretInput = page.locator("[data-testid=secret]");
    expect(await secretInput.getAttribute("type")).toBe("password");
    await page.getByRole("button", { name: "Reveal" }).click();
    expect(await secretInput.getAttribute("type")).toBe("text");
    const fresh = await secretInput.inputValue();
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(firstSecret);
    expect((await webhook(firstSecret, { n: 3 })).status).toBe(202);
    expect((await webhook(fresh, { n: 4 })).status).toBe(202);
    expect((await webhook("whsec_wrong", { n: 5 })).status).toBe(401);
    secret = fresh;
    // The runs from outside appear in the log live (no reload): 1 test + 3 webhooks.
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=logs] tbody tr").length >= 4, undefined, { timeout: 20_000 });
    await page.waitForFunction(() => Array.from(document.querySelectorAll("[data-testid=logs] tbody tr")).every((r) => r.textContent?.includes("done")), undefined, { timeout: 20_000 });
    await shot("11-trigger-secret-rotated");
  });

  it("a failing script's error appears in the test result and in the log", async () => {
    await page.getByRole("textbox", { name: "JSON payload" }).fill('{"n": 1, "fail": "bad input"}');
    await page.getByRole("button", { name: "Send test" }).click();
    const err = page.locator("[data-testid=test-error]");
    await err.waitFor({ timeout: 30_000 });
    expect(await err.innerText()).toContain("boom: bad input");
    const row = page.locator("[data-testid=logs] tbody tr").filter({ hasText: "failed" }).first();
    await row.waitFor();
    expect(await row.innerText()).toContain("boom: bad input");
    await shot("12-trigger-failed-run");
  });

  it("falls back to polling when the graphql-ws socket is down", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await ctx.routeWebSocket(/\/graphql$/, (ws) => ws.close({ code: 1011, reason: "blocked by the test" }));
      const p = await ctx.newPage();
      p.setDefaultTimeout(15_000);
      await p.goto(app.url);
      await p.getByLabel("Admin token").fill(admin);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.goto(`${app.url}/#/triggers/${triggerId}`);
      await p.getByText("○ Polling").waitFor();
      await p.getByRole("textbox", { name: "JSON payload" }).fill('{"n": 50}');
      await p.getByRole("button", { name: "Send test" }).click();
      const result = p.locator("[data-testid=test-result-json]");
      await result.waitFor();
      expect(JSON.parse(await result.innerText())).toEqual({ doubled: 100 });
    } finally {
      await ctx.close();
    }
  });

  it("an agent without a script: the test's result links to its thread, which shows the messages", async () => {
    const r = await gql<{ createAgent: { id: string } }>(app.url, admin, `mutation { createAgent(input: { name: "Echo", instructions: "Be brief." }) { id } }`);
    const t = await gql<{ createTrigger: { trigger: { id: string } } }>(app.url, admin, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } } }`, {
      a: r.data!.createAgent.id,
    });
    await page.goto(`${app.url}/#/triggers/${t.data!.createTrigger.trigger.id}`);
    await page.getByRole("heading", { name: "Trigger", level: 1 }).waitFor();
    await page.getByRole("textbox", { name: "JSON payload" }).fill('{"question": "what is 2+2?"}');
    await page.getByRole("button", { name: "Send test" }).click();
    await page.locator("[data-testid=test-result-json]").waitFor({ timeout: 30_000 });
    await page.locator("[data-testid=logs]").getByRole("link", { name: "View thread" }).waitFor();
    await page.locator("[data-testid=test-result]").getByRole("link", { name: /^thr_/ }).click();
    await page.getByRole("heading", { name: "Thread", level: 1 }).waitFor();
    await page.locator(".message.role-user").filter({ hasText: "what is 2+2?" }).waitFor();
    await page.locator(".message.role-assistant").first().waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Trigger", level: 1 }).waitFor();
  });

  it("edits the description and sets a custom secret", async () => {
    await page.goto(`${app.url}/#/triggers/${triggerId}`);
    await page.getByRole("heading", { name: "Orders from the shop", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Edit description" }).click();
    await page.getByLabel("Description", { exact: true }).fill("Orders (v2)");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("heading", { name: "Orders (v2)", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Set a custom secret…" }).click();
    const dialog = page.getByRole("dialog", { name: "Set a custom secret" });
    await dialog.getByLabel("New secret").fill("short");
    await dialog.getByRole("button", { name: "Save secret" }).click();
    await dialog.getByRole("alert").filter({ hasText: "24 to 256" }).waitFor();
    const custom = "my-own-secret-that-is-long-enough";
    await dialog.getByLabel("New secret").fill(custom);
    await dialog.getByRole("button", { name: "Save secret" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(await page.locator("[data-testid=secret]").inputValue()).toBe(custom);
    expect((await webhook(custom, { n: 6 })).status).toBe(202);
    expect((await webhook(secret, { n: 7 })).status).toBe(202); // the rotated-out one is in its grace window
    // Not requiring a secret (with a warning), then requiring it again.
    const requireBox = page.getByLabel(/Require the secret or a signature/);
    await requireBox.uncheck();
    await page.getByText("Anyone who knows the webhook URL").waitFor();
    await page.waitForFunction(() => !(document.querySelector("input[type=checkbox]") as HTMLInputElement | null)?.disabled);
    expect((await webhook("", { n: 8 })).status).toBe(202);
    await requireBox.check();
    await page.getByText("Anyone who knows the webhook URL").waitFor({ state: "detached" });
    await page.waitForFunction(() => !(document.querySelector("input[type=checkbox]") as HTMLInputElement | null)?.disabled);
    expect((await webhook("nope", { n: 9 })).status).toBe(401);
  });

  it("account settings: retention and the relaxed signature timestamp", async () => {
    await page.locator("[data-testid=account-name]").click();
    await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
    await page.getByLabel("Payload retention (days)").fill("7");
    await page.getByLabel(/without/).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const me = await gql<{ me: { retentionDays: number; relaxSignatureTimestamp: boolean } }>(app.url, admin, `{ me { retentionDays relaxSignatureTimestamp } }`);
    expect(me.data!.me).toEqual({ retentionDays: 7, relaxSignatureTimestamp: true });
    await shot("16-account");
  });

  it("the example script offered for new agents is accepted by the server", async () => {
    await page.goto(`${app.url}/#/agents/new`);
    await page.getByLabel("Name").fill("Example");
    await page.getByRole("button", { name: "Insert example script" }).click();
    expect(await page.getByLabel("Script (optional)").inputValue()).toContain("export default async function run(input, ctx)");
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { name: "Example", level: 1 }).waitFor();
  });

  it("works at phone width", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${app.url}/#/triggers/${triggerId}`);
      await page.getByRole("heading", { name: "Orders (v2)", level: 1 }).waitFor();
      await page.locator("[data-testid=logs] tbody tr").first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot("13-phone-trigger");
      await page.goto(agentUrl);
      await page.getByRole("heading", { name: "Doubler", level: 1 }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot("14-phone-agent");
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("deletes the agent with confirmation, then signs out (the token is cleared)", async () => {
    await page.goto(agentUrl);
    await page.getByRole("button", { name: "Delete agent…" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete Doubler?" });
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "hidden" });
    await page.getByRole("button", { name: "Delete agent…" }).click();
    await page.getByRole("dialog", { name: "Delete Doubler?" }).getByRole("button", { name: "Delete agent" }).click();
    await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    await page.getByRole("link", { name: "Echo" }).waitFor();
    expect(await page.getByRole("link", { name: "Doubler" }).count()).toBe(0);
    await shot("15-agents-list");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Admin token").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("agw.adminToken"))).toBeNull();
  });
});
