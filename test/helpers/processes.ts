import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The production entry points as separate processes (`npm run serve`, `npm run worker`). With
 * TEST_DIST=1 (set by .ci/run right after `npm run build`) they run the compiled `dist/`, exactly
 * as `npm run serve` / `npm run worker` do; otherwise the sources, so a stale local build never
 * decides a result.
 */
export const root = fileURLToPath(new URL("../..", import.meta.url));
const fromDist = process.env.TEST_DIST === "1";
if (fromDist && !existsSync(`${root}/dist/src/entry/serve.js`)) throw new Error("TEST_DIST=1 but dist/ is not built: run npm run build");
const entry = (name: string) => (fromDist ? [`dist/src/entry/${name}.js`] : ["--import", "@swc-node/register/esm-register", `src/entry/${name}.ts`]);

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function runEntry(name: string, env: Record<string, string>): Proc {
  let out = "";
  const child = spawn(process.execPath, ["--enable-source-maps", ...entry(name)], { cwd: root, env: { PATH: process.env.PATH!, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  return { child, output: () => out, exited: new Promise((r) => child.once("exit", (code) => r(code))) };
}

export async function until(check: () => Promise<boolean> | boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}
