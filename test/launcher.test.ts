import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../src/dev/free-port.js";
import { isAlive } from "../src/dev/processes.js";
import { gql } from "./helpers/graphql.js";

/**
 * `npm start` as a newcomer runs it: a cold start to /readyz, the banner, the admin CLI beside
 * it, Ctrl-C leaving nothing behind, a warm restart on the same data, and a crashed child taking
 * the whole tree down.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
const NODE_ARGS = ["--enable-source-maps", "--import", "@swc-node/register/esm-register"];

interface Launcher {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ["DATABASE_URL", "TEMPORAL_ADDRESS", "OPERATOR_TOKEN", "SECRET_ENCRYPTION_KEY", "NODE_ENV", "VITEST", "VITEST_POOL_ID", "VITEST_WORKER_ID"]) delete env[k];
  return { ...env, ...extra, LOG_LEVEL: "warn" };
}

async function launch(dataDir: string): Promise<Launcher> {
  const port = await freePort();
  let out = "";
  const child = spawn(process.execPath, [...NODE_ARGS, "src/dev/start.ts"], {
    cwd: root,
    env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, port, output: () => out, exited };
}

async function waitReady(l: Launcher, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (l.child.exitCode !== null) throw new Error(`launcher exited early:\n${l.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${l.port}/readyz`);
      if (res.status === 200 && l.output().includes("Ctrl-C stops everything")) return Date.now() - started;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready within ${timeoutMs} ms:\n${l.output()}`);
}

function childPids(dataDir: string): { postgres?: number; temporal?: number } {
  const pgPid = join(dataDir, "postgres", "postmaster.pid");
  const tPid = join(dataDir, "temporal", "temporal.pid");
  return {
    postgres: existsSync(pgPid) ? Number(readFileSync(pgPid, "utf8").split("\n")[0]) : undefined,
    temporal: existsSync(tPid) ? Number(readFileSync(tPid, "utf8")) : undefined,
  };
}

function admin(args: string[], dataDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...NODE_ARGS, "src/admin/cli.ts", ...args], { cwd: root, env: cleanEnv({ DATA_DIR: dataDir }) }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

async function waitDead(pid: number | undefined, ms = 15_000): Promise<boolean> {
  if (!pid) return true;
  const deadline = Date.now() + ms;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return !isAlive(pid);
}

describe("npm start (dev launcher)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-launch-"));
  const running: Launcher[] = [];
  afterAll(async () => {
    for (const l of running) if (l.child.exitCode === null) l.child.kill("SIGKILL");
    const pids = childPids(dataDir);
    for (const pid of [pids.postgres, pids.temporal]) if (pid && isAlive(pid)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  let adminToken = "";
  let accountId = "";

  it("cold-starts to /readyz 200 with one banner; the admin CLI works beside it; Ctrl-C leaves nothing running", async () => {
    const l = await launch(dataDir);
    running.push(l);
    const ms = await waitReady(l);
    expect(ms).toBeLessThan(60_000);
    const out = l.output();
    expect(out).toContain(`API          http://127.0.0.1:${l.port}`);
    expect(out).toContain(`GraphQL      http://127.0.0.1:${l.port}/graphql`);
    expect(out).toMatch(/Temporal UI  http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain(`Data         ${dataDir}`);
    const token = /Operator token {2}(opr_\w+)/.exec(out)?.[1];
    expect(token).toBeDefined();
    expect(out.match(/Agent Gateway is running/g)).toHaveLength(1);
    // The web console is served without extra steps (built on first start if needed).
    const page = await fetch(`http://127.0.0.1:${l.port}/`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<div id="root">|<script type="module"/);

    const created = JSON.parse(await admin(["create-account", "--name", "acme", "--balance", "10", "--json"], dataDir));
    ({ adminToken, accountId } = created);
    const me = await gql(`http://127.0.0.1:${l.port}`, adminToken, "{ me { id balance } }");
    expect(me.data).toEqual({ me: { id: accountId, balance: "10.000000" } });
    // The printed operator token is the live one.
    const op = await gql(`http://127.0.0.1:${l.port}`, token, `mutation($a: ID!) { topUpBalance(accountId: $a, amount: "1") { balance } }`, { a: accountId });
    expect(op.data).toEqual({ topUpBalance: { balance: "11.000000" } });

    const pids = childPids(dataDir);
    expect(pids.postgres && isAlive(pids.postgres)).toBe(true);
    expect(pids.temporal && isAlive(pids.temporal)).toBe(true);
    l.child.kill("SIGINT");
    expect(await l.exited).toBe(0);
    expect(await waitDead(pids.postgres)).toBe(true);
    expect(await waitDead(pids.temporal)).toBe(true);
    expect(existsSync(join(dataDir, "runtime.json"))).toBe(false);
  });

  it("a second start reuses the data; a second launcher on the same DATA_DIR is refused", async () => {
    const l = await launch(dataDir);
    running.push(l);
    await waitReady(l);
    const me = await gql(`http://127.0.0.1:${l.port}`, adminToken, "{ me { id balance } }");
    expect(me.data).toEqual({ me: { id: accountId, balance: "11.000000" } });

    const twin = await launch(dataDir);
    expect(await twin.exited).toBe(1);
    expect(twin.output()).toMatch(/is in use by another npm start/);

    l.child.kill("SIGTERM");
    expect(await l.exited).toBe(0);
  });

  it("when a child crashes, the launcher stops everything else and exits non-zero", async () => {
    const l = await launch(dataDir);
    running.push(l);
    await waitReady(l);
    const pids = childPids(dataDir);
    process.kill(pids.postgres!, "SIGKILL");
    expect(await l.exited).toBe(1);
    expect(l.output()).toMatch(/embedded PostgreSQL exited unexpectedly/);
    expect(await waitDead(pids.temporal)).toBe(true);
  });
});

describe("a script that waits for /readyz after npm start, then runs the admin CLI at once (issue 8, defect 1)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-race-"));
  let l: Launcher | undefined;
  afterAll(async () => {
    if (l && l.child.exitCode === null) l.child.kill("SIGKILL");
    const pids = childPids(dataDir);
    for (const pid of [pids.postgres, pids.temporal]) if (pid && isAlive(pid)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the CLI succeeds against the running stack, and the stack stays up", async () => {
    l = await launch(dataDir);
    // Poll as tightly as a script would; no waiting for the banner.
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (l.child.exitCode !== null) throw new Error(`launcher exited early:\n${l.output()}`);
      if (Date.now() > deadline) throw new Error(`not ready:\n${l.output()}`);
      const status = await fetch(`http://127.0.0.1:${l.port}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const created = JSON.parse(await admin(["create-account", "--name", "racer", "--balance", "1", "--json"], dataDir));
    expect(created.adminToken).toMatch(/^adm_/);
    const pids = childPids(dataDir);
    expect(pids.postgres && isAlive(pids.postgres)).toBe(true);
    expect(l.child.exitCode).toBeNull();
    expect((await fetch(`http://127.0.0.1:${l.port}/readyz`)).status).toBe(200);
    const me = await gql(`http://127.0.0.1:${l.port}`, created.adminToken, "{ me { id balance } }");
    expect(me.data).toEqual({ me: { id: created.accountId, balance: "1.000000" } });
    expect(l.output()).not.toMatch(/exited unexpectedly|unexpected postmaster exit/);
    l.child.kill("SIGINT");
    expect(await l.exited).toBe(0);
  });

  it("a second PostgreSQL start on a data directory whose owner is alive is refused, and the live server is untouched", async () => {
    const { startEmbeddedPostgres } = await import("../src/dev/embedded-postgres.js");
    const dir = join(dataDir, "owned");
    const owner = await startEmbeddedPostgres(dir);
    try {
      await expect(startEmbeddedPostgres(dir)).rejects.toThrow(/belongs to the running process/);
      await owner.ensureDatabase("still_alive");
    } finally {
      await owner.stop();
    }
  });
});
