import { request as httpsRequest } from "node:https";
import { request as httpRequest } from "node:http";

/** GET `url` once (TLS verified against `ca` when given); resolves the status, or 0 when unreachable. */
export function probe(url: string, options: { ca?: string; timeoutMs?: number } = {}): Promise<number> {
  const u = new URL(url);
  const request = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(u, { method: "GET", ca: options.ca, agent: false, timeout: options.timeoutMs ?? 3000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(0));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

/** Polls `check` until it holds; throws naming `what` after `timeoutMs`, or at once when `failed()` says so. */
export async function waitFor(what: string, check: () => Promise<boolean>, options: { timeoutMs: number; failed?: () => string | undefined }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const failure = options.failed?.();
    if (failure) throw new Error(`${what}: ${failure}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${Math.round(options.timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
