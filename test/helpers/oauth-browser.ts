import type { Browser, Page } from "playwright-core";

/**
 * Drives the product's sign-in and consent pages (src/oauth/pages.ts) in Chromium, as a person
 * would: the admin token in "Admin token", "Sign in", then "Allow" or "Deny". The client's
 * redirect URI is answered by the browser itself (a route), so no server is needed for it; the
 * URL it was sent to (with code or error, state, iss) is returned. Page errors are collected.
 */
export interface Authorized {
  callbackUrl: URL;
  /** Texts of the consent page (empty when no consent page was shown). */
  consentText: string;
  pageErrors: string[];
}

export async function authorizeInBrowser(
  browser: Browser,
  authorizationUrl: string,
  redirectPrefix: string,
  adminToken: string | undefined,
  decision: "Allow" | "Deny",
): Promise<Authorized> {
  const context = await browser.newContext();
  const page: Page = await context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
  let resolveCallback!: (u: URL) => void;
  const callback = new Promise<URL>((r) => (resolveCallback = r));
  await page.route(`${redirectPrefix}**`, async (route) => {
    resolveCallback(new URL(route.request().url()));
    await route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>done</title><p>You may close this window.</p>" });
  });
  try {
    await page.goto(authorizationUrl);
    let consentText = "";
    const settled = await Promise.race([callback.then(() => "callback" as const), page.getByLabel("Admin token").waitFor({ timeout: 15_000 }).then(() => "login" as const)]);
    if (settled === "login") {
      await page.getByLabel("Admin token").fill(adminToken ?? "");
      await page.getByRole("button", { name: "Sign in" }).click();
    }
    const next = await Promise.race([callback.then(() => "callback" as const), page.getByRole("button", { name: decision }).waitFor({ timeout: 15_000 }).then(() => "consent" as const)]);
    if (next === "consent") {
      consentText = await page.locator("main").innerText();
      await page.getByRole("button", { name: decision }).click();
    }
    return { callbackUrl: await callback, consentText, pageErrors };
  } catch (err) {
    const shown = await page.locator("body").innerText().catch(() => "");
    throw new Error(`${(err as Error).message}\nat ${page.url()}\n${shown.slice(0, 2000)}`);
  } finally {
    await context.close();
  }
}
