import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive } from "../src/dev/processes.js";
import { gql } from "./helpers/graphql.js";
import { admin, childPids, launch, waitDead, waitReady, type Launcher } from "./helpers/launcher.js";

/**
 * `npm start` as a newcomer runs it: a cold start to /readyz, the banner, the admin CLI beside
 * it, Ctrl-C leaving nothing behind, a warm restart on the same data, and a crashed child taking
 * the whole tree down.
 */
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
