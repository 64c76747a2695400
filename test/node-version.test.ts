import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * On a machine whose own Node is older than 24 (Debian's 20 here), the documented commands fail at
 * once with a message that says which Node is needed and how to get it, instead of a loader error
 * deep inside a dependency (`node:fs` has no `globSync`). Skipped where no older Node is installed.
 */
const root = fileURLToPath(new URL("..", import.meta.url));

function olderNode(): string | undefined {
  const candidates = spawnSync("which", ["-a", "node"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  return candidates.find((bin) => {
    const major = Number(spawnSync(bin, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).stdout.trim());
    return Number.isInteger(major) && major > 0 && major < 24;
  });
}

const old = olderNode();
const npm = spawnSync("which", ["npm"], { encoding: "utf8" }).stdout.trim();

describe.skipIf(!old || !npm)(`the documented commands on an older Node (${old ?? "none found"})`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-oldnode-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = () => {
    const e: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(old!)}:${process.env.PATH}`, DATA_DIR: dataDir, PORT: "0" };
    for (const k of ["VITEST", "VITEST_POOL_ID", "VITEST_WORKER_ID", "NODE_OPTIONS", "npm_config_engine_strict"]) delete e[k];
    return e;
  };

  it.each([["start"], ["test"], ["run", "admin", "--", "create-account", "--name", "x"]])("npm %s fails fast and names Node 24", (...args: string[]) => {
    const r = spawnSync(npm, args, { cwd: root, env: env(), encoding: "utf8", timeout: 60_000 });
    expect(r.status).not.toBe(0);
    const out = `${r.stdout}${r.stderr}`;
    expect(out).toMatch(/needs Node\.js 24 or newer; `node` here is v\d+/);
    expect(out).toMatch(/npm install --prefix \.tools\/node node@24/);
    expect(out).not.toMatch(/globSync|SyntaxError/);
  });

  it("npm install refuses the engine (engine-strict)", () => {
    const r = spawnSync(npm, ["install", "--dry-run", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: root, env: env(), encoding: "utf8", timeout: 120_000 });
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/Unsupported engine|notsup/);
  });

  it("the same check passes on this Node", () => {
    expect(() => execFileSync(process.execPath, ["scripts/check-node.cjs"], { cwd: root })).not.toThrow();
  });
});
