import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { gql } from "./helpers/graphql.js";
import { adminRun, stopLauncher, launch, waitReady, type Launcher } from "./helpers/launcher.js";
import { python, pythonSignInAndChat } from "./helpers/oauth-python.js";

/**
 * OAuth sign-in (docs/design/oauth.md) on what a newcomer runs: `npm start` (its simulator answering), an account from the
 * admin CLI, and the Python MCP SDK's OAuthClientProvider signing in through Chromium on the
 * product's pages, then calling `chat`, as in docs/guides/mcp.md "Add an agent to ChatGPT / Claude".
 */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const REDIRECT = "http://127.0.0.1:47313/callback";

describe("npm start: an MCP client signs in with OAuth", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-oauth-launch-"));
  let l: Launcher | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await stopLauncher(l, dataDir);
  });

  it.skipIf(!existsSync(python))("docs/guides/mcp.md's connector steps work against npm start", async () => {
    l = await launch(dataDir);
    await waitReady(l, 180_000);
    const api = `http://127.0.0.1:${l.port}`;
    const made = await adminRun(["create-account", "--name", "Launch", "--balance", "10", "--json"], { DATA_DIR: dataDir });
    expect(made.code, made.stderr).toBe(0);
    const { adminToken } = JSON.parse(made.stdout) as { adminToken: string };
    const agentId = (await gql(api, adminToken, `mutation { createAgent(input: { name: "Launched" }) { id } }`)).data!.createAgent.id as string;
    browser = await chromium.launch({ executablePath: CHROMIUM });
    const { out, pageErrors, consentText } = await pythonSignInAndChat(browser, { mcpUrl: `${api}/api/mcp/${agentId}`, redirect: REDIRECT, adminToken });
    expect(out.tools).toEqual(["chat"]);
    expect(out.is_error).toBe(false);
    expect(out.answer.length).toBeGreaterThan(0);
    expect(consentText).toContain("Launched");
    expect(pageErrors).toEqual([]);
  }, 300_000);
});
