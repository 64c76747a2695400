/// <reference lib="dom" />
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { jobOf } from "./helpers/ask.js";
import { createAccount } from "./helpers/graphql.js";
import { newAgent, newTrigger } from "./helpers/ops.js";
import { ensureConsoleBuilt } from "../src/console/build.js";
import { projectRoot } from "../src/console/paths.js";

/**
 * Runs that ask, in the console (Chromium): a test send pauses on ctx.ask, the Test panel shows
 * the question with a form made from its schema; a wrong answer shows the server's reason and the
 * run keeps waiting, a right one lets it finish live; another waiting run is cancelled from its
 * button after a confirm. The page logs no error all along.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const SHOTS = join(projectRoot(), "test-artifacts", "console");

const ASKING = `export default async function run(input, ctx) {
  const a = await ctx.ask({
    prompt: "How many units of " + input.item + "?",
    schema: {
      type: "object",
      properties: {
        qty: { type: "integer", minimum: 1, title: "Quantity", description: "At least one" },
        size: { enum: ["S", "M", "L"] },
        gift: { type: "boolean", title: "Gift wrap" },
      },
      required: ["qty", "size"],
      additionalProperties: false,
    },
  });
  return { item: input.item, ...a };
}`;

describe("console: answering and cancelling runs that ask", () => {
  let app: TestApp;
  let admin: string;
  let triggerId: string;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const [, started] = await Promise.all([ensureConsoleBuilt(), startTestApp({ worker: true })]);
    app = started;
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    triggerId = (await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "Orders", script: ASKING }))).id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(30_000);
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(m.text());
    });
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(app.url);
    await page.getByLabel("Admin token").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Agents" }).waitFor();
  }, 300_000);
  afterEach(async ({ task }) => {
    if (task.result?.state === "fail" && page) await shot(`ask-failed-${task.name.replace(/[^\w]+/g, "-").slice(0, 50)}`).catch(() => {});
  });
  afterAll(async () => {
    await browser?.close().catch(() => {});
    await app?.close();
  });

  /** Sends a test from the trigger's page and waits for the question; the job's id. */
  const sendAndWaitForQuestion = async (item: string): Promise<string> => {
    await page.goto(`${app.url}/#/triggers/${triggerId}`);
    await page.getByRole("button", { name: "Send test" }).waitFor();
    await page.getByLabel("JSON payload").fill(JSON.stringify({ item }));
    await page.getByRole("button", { name: "Send test" }).click();
    const result = page.getByTestId("test-result");
    await result.getByTestId("question").filter({ hasText: `How many units of ${item}?` }).waitFor();
    await result.getByText("input_required").waitFor();
    const cancel = result.getByRole("button", { name: /^Cancel job job_/ });
    return (await cancel.getAttribute("aria-label"))!.replace("Cancel job ", "");
  };

  it("a wrong answer shows the server's reason and the run keeps waiting; a right one finishes it live", async () => {
    const jobId = await sendAndWaitForQuestion("socks");
    const form = page.getByTestId("answer-form");
    await shot("ask-01-question");
    await form.getByLabel("Quantity").fill("0");
    await form.getByLabel("size").selectOption("M");
    await form.getByRole("button", { name: "Submit answer" }).click();
    await form.getByRole("alert").filter({ hasText: "/qty must be >= 1" }).waitFor();
    await shot("ask-02-wrong-answer");
    expect((await jobOf(app.url, admin, jobId)).status).toBe("INPUT_REQUIRED");

    await form.getByLabel("Quantity").fill("3");
    await form.getByLabel("Gift wrap").check();
    await form.getByRole("button", { name: "Submit answer" }).click();
    const json = page.getByTestId("test-result-json");
    await json.waitFor();
    expect(JSON.parse(await json.innerText())).toEqual({ item: "socks", qty: 3, size: "M", gift: true });
    expect(await page.getByTestId("test-result").innerText()).toMatch(/done/);
    await expect(form.count()).resolves.toBe(0);
    await shot("ask-03-answered");
    expect(await jobOf(app.url, admin, jobId)).toMatchObject({ status: "DONE", inputRequest: null });
  });

  it("Cancel, after a confirm, fails the waiting run with “cancelled”", async () => {
    const jobId = await sendAndWaitForQuestion("hats");
    await page.getByRole("button", { name: `Cancel job ${jobId}` }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this job?" });
    await dialog.getByRole("button", { name: "Keep the job" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await jobOf(app.url, admin, jobId)).status).toBe("INPUT_REQUIRED");

    await page.getByRole("button", { name: `Cancel job ${jobId}` }).click();
    await dialog.getByRole("button", { name: "Cancel the job" }).click();
    await page.getByTestId("test-error").filter({ hasText: "cancelled" }).waitFor();
    expect(await page.getByTestId("test-result").innerText()).toMatch(/failed/);
    await shot("ask-04-cancelled");
    expect(await jobOf(app.url, admin, jobId)).toMatchObject({ status: "FAILED", error: "cancelled" });
  });

  it("the job's page shows the question too, answers it as JSON and follows the run to done", async () => {
    const jobId = await sendAndWaitForQuestion("gloves");
    await page.goto(`${app.url}/#/jobs/${jobId}`);
    const form = page.getByTestId("answer-form");
    await form.getByTestId("question").filter({ hasText: "How many units of gloves?" }).waitFor();
    await form.getByLabel("Quantity").fill("2");
    await form.getByRole("button", { name: "Edit as JSON" }).click();
    const json = form.getByLabel("Answer (JSON)");
    expect(JSON.parse(await json.inputValue())).toEqual({ qty: 2, gift: false });
    await json.fill('{ "qty": 2, "size": "L", "colour": "red" }');
    await form.getByRole("button", { name: "Submit answer" }).click();
    await form.getByRole("alert").filter({ hasText: "must NOT have additional properties (colour)" }).waitFor();
    await json.fill('{ "qty": 2, "size": "L" }');
    await form.getByRole("button", { name: "Submit answer" }).click();
    await page.locator(".page-head").getByText("done").waitFor();
    await expect(form.count()).resolves.toBe(0);
    expect(await jobOf(app.url, admin, jobId)).toMatchObject({ status: "DONE", result: { item: "gloves", qty: 2, size: "L" } });
  });

  it("the page logged no error", () => {
    expect(pageErrors).toEqual([]);
  });
});
