/// <reference lib="dom" />
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstreams.js";
import { createAccount } from "./helpers/graphql.js";
import { must, newAgent, newTrigger, postWebhook, waitForJob } from "./helpers/ops.js";
import { ensureConsoleBuilt } from "../src/console/build.js";
import { projectRoot } from "../src/console/paths.js";

/**
 * The console's operations pages in Chromium (issue 12 item 7): jobs with cancel, the failed-jobs
 * view with replay, a job's audit, the usage chart, admin tokens, paged threads.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const SHOTS = join(projectRoot(), "test-artifacts", "console");

describe("console operations pages in Chromium", () => {
  let fake: FakeUpstream;
  let app: TestApp;
  let admin: string;
  let browser: Browser;
  let page: Page;
  let writerAgent: string;
  let spinning: string;
  let failerTrigger: string;
  const failed: string[] = [];
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium or set CHROMIUM_PATH`);
    mkdirSync(SHOTS, { recursive: true });
    fake = await startFakeUpstream();
    const [, started] = await Promise.all([
      ensureConsoleBuilt(),
      startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "a", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "b", SCRIPT_TIMEOUT_MS: "600000", SCRIPT_WALL_TIME_MS: "600000", SCRIPT_CPU_TIME_MS: "600000", SCHEDULE_MIN_INTERVAL_SECONDS: "1" } }),
    ]);
    app = started;
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    writerAgent = await newAgent(app.url, admin, { name: "Writer" });
    const writer = await newTrigger(app.url, admin, writerAgent);
    const failer = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "Failer", script: `export default async function run(input) { throw new Error("bad order " + input.n); }` }));
    failerTrigger = failer.id;
    const spinner = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "Spinner", script: `export default async function run() { for (;;) {} }` }));
    for (let n = 0; n < 3; n++) await waitForJob(app.url, admin, (await postWebhook(app.url, writer, { n })).body.job_id);
    for (let n = 0; n < 2; n++) {
      const id = (await postWebhook(app.url, failer, { n })).body.job_id;
      await waitForJob(app.url, admin, id);
      failed.push(id);
    }
    // 25 chat threads on Writer's key: more than one page of the agent's threads.
    const key = (await must(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: writerAgent })).createApiKey.key;
    for (let i = 0; i < 25; i++) {
      const res = await fetch(`${app.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "provider_b/model-haiku-4-5-20251001", messages: [{ role: "user", content: `hi ${i}` }] }),
      });
      expect(res.status).toBe(200);
    }
    spinning = (await postWebhook(app.url, spinner, { spin: true })).body.job_id;
    for (let i = 0; (await must(app.url, admin, `query($id: ID!) { job(id: $id) { status } }`, { id: spinning })).job.status !== "RUNNING"; i++) {
      expect(i).toBeLessThan(600);
      await new Promise((r) => setTimeout(r, 100));
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(app.url);
    await page.getByLabel("Admin token").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Agents" }).waitFor();
  }, 300_000);
  afterEach(async ({ task }) => {
    if (task.result?.state === "fail" && page) await shot(`ops-failed-${task.name.replace(/[^\w]+/g, "-").slice(0, 50)}`).catch(() => {});
  });
  afterAll(async () => {
    await browser?.close().catch(() => {});
    await app?.close();
    await fake?.close();
  });

  it("jobs: every run newest first; Cancel (confirmed) on the running one makes it failed with “cancelled”", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).click();
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    const row = page.locator(`[data-job="${spinning}"]`);
    await row.getByText("running").waitFor();
    expect(await page.locator("[data-testid=jobs] tbody tr").count()).toBe(6);
    await shot("ops-01-jobs");
    await row.getByRole("button", { name: `Cancel job ${spinning}` }).click();
    await page.getByRole("dialog", { name: "Cancel this job?" }).getByRole("button", { name: "Cancel the job" }).click();
    await page.getByRole("status").filter({ hasText: "cancelled" }).waitFor();
    await row.getByText("failed").waitFor();
    expect(await row.innerText()).toContain("cancelled");
    expect((await must(app.url, admin, `query($id: ID!) { job(id: $id) { status error } }`, { id: spinning })).job).toEqual({ status: "FAILED", error: "cancelled" });
  });

  it("the failed-jobs view lists failed runs; Replay starts a new job with the same payload", async () => {
    await page.getByLabel("Status").selectOption("FAILED");
    await page.getByRole("heading", { name: "Failed jobs" }).waitFor();
    expect(page.url()).toMatch(/#\/jobs\/failed$/);
    for (const id of [...failed, spinning]) await page.locator(`[data-job="${id}"]`).waitFor();
    expect(await page.locator("[data-testid=jobs] tbody tr").count()).toBe(3);
    await shot("ops-02-failed-jobs");
    await page.getByRole("button", { name: `Replay job ${failed[0]}` }).click();
    const notice = page.getByRole("status").filter({ hasText: "Replay started as job" });
    await notice.waitFor();
    const replayId = /job (job_\w+)/.exec(await notice.innerText())![1]!;
    const replayed = await waitForJob(app.url, admin, replayId);
    expect(replayed).toMatchObject({ status: "FAILED", error: expect.stringContaining("bad order 0") });
    await page.locator(`[data-job="${replayId}"]`).getByText("(replay)").waitFor();
  });

  it("a trigger's runs page by page from its log panel", async () => {
    await page.goto(`${app.url}/#/triggers/${failerTrigger}`);
    await page.getByRole("link", { name: "All runs, a page at a time" }).click();
    await page.getByRole("heading", { name: "Runs of a trigger" }).waitFor();
    const expected = (await must(app.url, admin, `query($t: ID!) { jobs(filter: { triggerId: $t }) { edges { node { id } } } }`, { t: failerTrigger })).jobs.edges;
    await page.locator(`[data-job="${expected[0].node.id}"]`).waitFor();
    expect(await page.locator("[data-testid=jobs] tbody tr").count()).toBe(expected.length);
  });

  it("a job's page shows its audit: payload, result and the model calls it made", async () => {
    const writerJob = (await must(app.url, admin, `query($a: ID!) { jobs(first: 1, filter: { agentId: $a }) { edges { node { id cost } } } }`, { a: writerAgent })).jobs.edges[0].node;
    await page.goto(`${app.url}/#/jobs/${writerJob.id}`);
    await page.getByRole("heading", { name: "Audit" }).waitFor();
    expect(await page.locator("[data-testid=job-cost]").innerText()).toBe(`$${writerJob.cost}`);
    const tools = page.locator("[data-testid=tools-used] tbody tr");
    expect(await tools.count()).toBe(1);
    expect(await tools.first().innerText()).toContain("model");
    expect(await page.locator("pre.code").first().innerText()).toContain('"n"');
    await shot("ops-03-job-audit");
  });

  it("usage: a chart of cost per day by agent and a table by agent and model that add up to the ledger", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Usage" }).click();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    await page.locator("[data-testid=cost-chart] canvas").waitFor();
    const [total] = (await must(app.url, admin, `query($f: DateTimeISO!, $t: DateTimeISO!) { usage(from: $f, to: $t, groupBy: []) { cost } }`, { f: new Date(Date.now() - 86_400_000).toISOString(), t: new Date(Date.now() + 86_400_000).toISOString() })).usage;
    await page.locator("[data-testid=usage-total]").filter({ hasText: `$${total.cost}` }).waitFor();
    expect(await page.locator("[data-testid=usage-table] tbody").innerText()).toContain("Writer");
    // The chart drew something: some canvas pixels are not transparent.
    const painted = await page.locator("[data-testid=cost-chart] canvas").evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) n++;
      return n;
    });
    expect(painted).toBeGreaterThan(1000);
    await shot("ops-04-usage");
  });

  it("agent threads page 20 at a time; a thread shows its messages and cost", async () => {
    await page.goto(`${app.url}/#/agents/${writerAgent}`);
    const list = page.locator("[data-testid=agent-threads] li");
    await list.first().waitFor();
    expect(await list.count()).toBe(20);
    await page.getByRole("button", { name: "Load more threads" }).click();
    await page.locator("[data-testid=agent-threads] li:nth-child(28)").waitFor();
    expect(await list.count()).toBe(28);
    expect(await page.getByRole("button", { name: "Load more threads" }).count()).toBe(0);
    await list.first().getByRole("link").click();
    await page.getByRole("heading", { name: "Thread" }).waitFor();
    await page.locator(".message").nth(1).waitFor();
    expect(await page.locator("[data-testid=thread-cost]").innerText()).toMatch(/^\$0\.\d{6}$/);
    await shot("ops-05-thread");
  });

  it("admin tokens: create one (shown once), then revoke it and it stops working", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin tokens" }).click();
    await page.getByRole("heading", { name: "Admin tokens", level: 1 }).waitFor();
    await page.getByLabel("New token name").fill("deploy script");
    await page.getByRole("button", { name: "Create token" }).click();
    const dialog = page.getByRole("dialog", { name: "Your new admin token" });
    await dialog.waitFor();
    const token = await dialog.locator("input").inputValue();
    expect(token).toMatch(/^adm_/);
    expect((await must(app.url, token, "{ me { name } }")).me.name).toBe("acme");
    await shot("ops-06-admin-token-created");
    await dialog.getByRole("button", { name: "I have copied it" }).click();
    const rows = page.locator("[data-testid=admin-tokens] tbody tr");
    await rows.filter({ hasText: "deploy script" }).waitFor();
    expect(await page.locator("[data-testid=admin-tokens]").innerText()).not.toContain(token);
    await page.getByRole("button", { name: "Revoke token deploy script" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke token" }).click();
    await rows.filter({ hasText: "deploy script" }).waitFor({ state: "detached" });
    const res = await fetch(`${app.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query: "{ me { name } }" }) });
    expect(res.status).toBe(401);
    await shot("ops-07-admin-tokens");
  });
  it("schedules: on an automation agent's page, create an interval schedule (it fires), a bad one is refused, then pause it", async () => {
    const clock = await newAgent(app.url, admin, { name: "Clock", script: `export default async function run(input) { return { tick: input }; }` });
    await page.goto(`${app.url}/#/agents/${clock}`);
    const panel = page.locator("#schedules");
    await panel.getByRole("heading", { name: "Schedules" }).waitFor();
    await panel.getByRole("button", { name: "Create schedule" }).click();
    let dialog = page.getByRole("dialog", { name: "Create a schedule" });
    await dialog.getByLabel("Every", { exact: true }).fill("2s");
    await dialog.getByLabel("Time zone").fill("Europe/Berlin");
    await dialog.getByLabel("Payload (JSON)").fill('{"from":"console"}');
    await dialog.getByLabel("Description (optional)").fill("console clock");
    await dialog.getByRole("button", { name: "Create schedule" }).click();
    const row = panel.locator("li", { hasText: "every 2s" });
    await row.getByText("Next runs:").waitFor();
    const { rows } = await app.runtime.pool.query<{ id: string }>("select id from schedules where agent_id = $1", [clock]);
    const id = rows[0]!.id;
    // It fires: a done job with source SCHEDULE appears among its recent runs.
    for (let i = 0; (await must(app.url, admin, `query($id: ID!) { schedule(id: $id) { recentJobs { status source } } }`, { id })).schedule.recentJobs.every((j: { status: string }) => j.status !== "DONE"); i++) {
      expect(i).toBeLessThan(600);
      await new Promise((r) => setTimeout(r, 100));
    }
    await shot("ops-08-schedule-created");

    await panel.getByRole("button", { name: "Create schedule" }).click();
    dialog = page.getByRole("dialog", { name: "Create a schedule" });
    await dialog.getByLabel("Every", { exact: true }).fill("10ms");
    await dialog.getByRole("button", { name: "Create schedule" }).click();
    await dialog.getByRole("alert").filter({ hasText: "every: the interval must be at least 1 second" }).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();

    await row.getByRole("button", { name: "Pause" }).click();
    await row.locator(".badge", { hasText: "paused" }).waitFor();
    await row.getByRole("button", { name: "Resume" }).waitFor();
    expect((await app.runtime.temporal.client.schedule.getHandle(id).describe()).state.paused).toBe(true);
    await shot("ops-09-schedule-paused");
  });
});
