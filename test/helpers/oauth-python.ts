import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import type { Browser } from "playwright-core";
import { authorizeInBrowser } from "./oauth-browser.js";

/**
 * Runs test/clients/mcp_oauth.py (the Python `mcp` SDK's OAuthClientProvider, unmodified) against
 * an MCP URL; its `AUTHORIZE <url>` line is answered by Chromium on the product's pages (admin
 * token, Sign in, Allow), the redirect it was sent to written back on its stdin.
 */
export const python = process.env.OPENAI_PYTHON ?? resolve(".tools/py-venv/bin/python");

export interface PythonSignIn {
  out: any;
  consentText: string;
  pageErrors: string[];
  callback: URL;
}

export function pythonSignInAndChat(browser: Browser, opts: { mcpUrl: string; redirect: string; adminToken: string; clientMetadataUrl?: string }): Promise<PythonSignIn> {
  return new Promise((ok, fail) => {
    const env = { ...process.env, MCP_URL: opts.mcpUrl, REDIRECT_URI: opts.redirect, CLIENT_METADATA_URL: opts.clientMetadataUrl ?? "" };
    const child = spawn(python, [resolve("test/clients/mcp_oauth.py")], { env });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const seen: { consentText: string; pageErrors: string[]; callback?: URL } = { consentText: "", pageErrors: [] };
    const timer = setTimeout(() => child.kill(), 120_000);
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("AUTHORIZE ")) {
        authorizeInBrowser(browser, line.slice(10), opts.redirect, opts.adminToken, "Allow").then(
          (a) => {
            Object.assign(seen, { consentText: a.consentText, pageErrors: a.pageErrors, callback: a.callbackUrl });
            child.stdin.write(a.callbackUrl.href + "\n");
          },
          (err) => {
            child.kill();
            fail(err);
          },
        );
      } else if (line.startsWith("{")) {
        clearTimeout(timer);
        ok({ out: JSON.parse(line), consentText: seen.consentText, pageErrors: seen.pageErrors, callback: seen.callback! });
      }
    });
    child.on("exit", (code) => code && fail(new Error(`python exited ${code}\n${stderr}`)));
  });
}
