import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnLogged } from "../../src/stack/child.js";
import { Supervisor, type Member } from "../../src/stack/supervisor.js";
import { isAlive } from "../../src/dev/processes.js";

/** The stack's supervisor with real processes: a killed process comes back, a crash loop gives up, stopAll stops all. */
const dir = mkdtempSync(join(tmpdir(), "agw-supervisor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleeper = (name: string): Member => ({
  name,
  role: "worker",
  start: async () => spawnLogged("sleep", ["300"], { env: { PATH: process.env.PATH }, logFile: join(dir, `${name}.log`) }),
});

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("stack supervisor", () => {
  it("restarts a process killed with SIGKILL, reports it, and stops everything on stopAll", async () => {
    const said: string[] = [];
    let changes = 0;
    const s = new Supervisor({ say: (m) => said.push(m), onChange: () => changes++, onGiveUp: () => {}, restartDelayMs: 50 });
    await s.add(sleeper("a"));
    await s.add(sleeper("b"));
    const first = s.processes().find((p) => p.name === "a")!.pid;
    process.kill(first, "SIGKILL");
    await until(() => s.processes().find((p) => p.name === "a")!.pid !== first);
    const second = s.processes().find((p) => p.name === "a")!.pid;
    expect(isAlive(second)).toBe(true);
    expect(said.join("\n")).toMatch(/a \(pid \d+\) exited unexpectedly \(signal SIGKILL\); restarting/);
    expect(changes).toBeGreaterThanOrEqual(3);

    const pids = s.processes().map((p) => p.pid);
    await s.stopAll([["b"]]);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    // Exits caused by stopAll are not restarts.
    await new Promise((r) => setTimeout(r, 200));
    expect(s.processes().map((p) => p.pid).sort()).toEqual(pids.sort());
  });

  it("gives up on a process that keeps dying", async () => {
    let gaveUp = "";
    const s = new Supervisor({ say: () => {}, onChange: () => {}, onGiveUp: (r) => (gaveUp = r), restartDelayMs: 10, maxRestarts: 3 });
    await s.add({ name: "crashy", role: "api", start: async () => spawnLogged("sh", ["-c", "exit 3"], { env: { PATH: process.env.PATH }, logFile: join(dir, "crashy.log") }) });
    await until(() => gaveUp !== "");
    expect(gaveUp).toMatch(/crashy .* exited unexpectedly \(code 3\) 4 times within a minute/);
    await s.stopAll([]);
  });
});
