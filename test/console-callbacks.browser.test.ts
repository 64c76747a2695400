/// <reference lib="dom" />
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { startCallbackReceiver, type CallbackReceiver } from "./helpers/callback-receiver.js";
import { createAccount, gql } from "./helpers/graphql.js";
import { makeTestCa, type TestCa } from "./helpers/tls.js";
import { waitUntil } from "./helpers/worker-process.js";
import { ensureConsoleBuilt } from "../src/console/build.js";

/**
 * The console's completion callbacks in Chromium: the trigger page sets the callback URL and
 * sends a test event (the receiver gets it); the job page lists the attempts and redelivers.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

describe("console: completion callbacks", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let triggerId: string;
  let secret: string;

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    const [, started] = await Promise.all([
      ensureConsoleBuilt(),
      startTestApp({ worker: true, env: { EGRESS_ALLOW_ADDRESSES: "127.0.0.2", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }), EGRESS_CA_FILE: ca.caFile, OUTBOUND_RETRY_SCHEDULE: "1" } }),
    ]);
    app = started;
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    const agent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "echo", script: $s }) { id } }`, { s: "export default async function run(input) { return input; }" })).data!.createAgent.id;
    const t = (await gql(app.url, admin, `mutation($a: ID!) { createTrigger(agentId: $a, description: "Orders") { trigger { id } secret } }`, { a: agent })).data!.createTrigger;
    triggerId = t.trigger.id;
    secret = t.secret;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(app.url);
    await page.getByLabel("Admin token").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Agents" }).waitFor();
  });
  afterAll(async () => {
    await browser?.close().catch(() => {});
    await app?.close();
    await hooks?.close();
    ca?.cleanup();
  });

  it("sets the callback URL, refuses a private one, and sends a signed test event", async () => {
    await page.goto(`${app.url}/#/triggers/${triggerId}`);
    await page.getByRole("heading", { name: "Orders", level: 1 }).waitFor();
    const field = page.getByTestId("callback-url");
    await field.fill("https://10.0.0.1/x");
    await page.getByRole("button", { name: "Save callback URL" }).click();
    await page.getByRole("alert").filter({ hasText: "private" }).waitFor();
    await field.fill(`https://hooks.test:${hooks.port}/flaky1-console`);
    await page.getByRole("button", { name: "Save callback URL" }).click();
    await page.getByRole("textbox", { name: "Callback signing secret" }).waitFor();
    await page.getByRole("button", { name: "Send a test callback" }).click();
    await page.getByTestId("deliveries").getByText("HTTP 500").waitFor(); // the receiver's first answer
    expect(hooks.to("/flaky1-console")).toHaveLength(1);
    expect(JSON.parse(hooks.to("/flaky1-console")[0]!.body)).toMatchObject({ type: "test", data: { trigger_id: triggerId } });
  });

  it("the job page lists the callback's attempts and redelivers it", async () => {
    const r = await fetch(`${app.url}/api/triggers/${triggerId}/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-trigger-secret": secret }, body: "{}" });
    const jobId = ((await r.json()) as { job_id: string }).job_id;
    await waitUntil(() => hooks.to("/flaky1-console").length === 3, 60_000, "the job's callback (and the test's retry)");
    await page.goto(`${app.url}/#/jobs/${jobId}`);
    await page.getByRole("heading", { name: "Completion callback" }).waitFor();
    await page.getByTestId("deliveries").getByText(`msg_${jobId}`).waitFor();
    await page.getByTestId("redeliver").click();
    await waitUntil(() => hooks.to("/flaky1-console").filter((c) => c.headers["webhook-id"] === `msg_${jobId}`).length === 2, 30_000, "the redelivery");
    await waitUntil(async () => (await page.getByTestId("deliveries").locator("tbody tr").count()) === 2, 30_000, "two rows");
  });
});
