import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { consoleDistDir, consoleSourceDir } from "./paths.js";

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    const t = entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs;
    if (t > newest) newest = t;
  }
  return newest;
}

/** True when dist/web/index.html is missing or older than the newest file in web/. */
export function consoleBuildIsStale(): boolean {
  const index = join(consoleDistDir(), "index.html");
  if (!existsSync(index)) return true;
  const src = consoleSourceDir();
  if (!existsSync(src)) return false; // an image with only the built console
  return newestMtime(src) > statSync(index).mtimeMs;
}

/**
 * Builds the web console with Vite (web/ → dist/web) when it is missing or out of date, so
 * `npm start` serves it without extra steps. Progress goes to stderr. Returns whether it built.
 */
export async function ensureConsoleBuilt(say: (msg: string) => void = (m) => process.stderr.write(`[console] ${m}\n`)): Promise<boolean> {
  if (!consoleBuildIsStale()) return false;
  const src = consoleSourceDir();
  if (!existsSync(src)) {
    say("web/ is missing; the console will not be served");
    return false;
  }
  say("building the web console (web/ → dist/web)…");
  const started = Date.now();
  const { build } = await import("vite");
  await build({ configFile: join(src, "vite.config.ts"), logLevel: "warn" });
  say(`web console built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}
