import { existsSync, readdirSync, statSync } from "node:fs";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { consoleDistDir, consoleSourceDir, projectRoot } from "./paths.js";

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
 * `vite build` in a child process: run in the launcher's own process, Vite (Rollup, esbuild and the
 * build's buffers) stayed resident afterwards, about 250 MB of the launcher's memory for good
 * (docs/capacity.md, "Memory").
 */
function viteBuildApart(configFile: string): Promise<void> {
  const vite = join(dirname(createRequire(import.meta.url).resolve("vite/package.json")), "bin", "vite.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [vite, "build", "--config", configFile, "--logLevel", "warn"], { cwd: projectRoot(), stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      err = (err + d).slice(-4000);
      process.stderr.write(d);
    });
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`vite build exited with ${code}: ${err.trim().split("\n").at(-1) ?? ""}`))));
  });
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
  await viteBuildApart(join(src, "vite.config.ts"));
  say(`web console built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}
