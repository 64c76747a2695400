import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAlive } from "../../src/dev/processes.js";
import { codeBlocks, runShellSession } from "../helpers/doc-samples.js";
import { childPids, cleanEnv, launch, waitReady, type Launcher } from "../helpers/launcher.js";

/**
 * The automation guides as a reader follows them: each file's runnable blocks, in order, as one
 * terminal session beside one `npm start` (started as the schedules guide asks, with a 5 s
 * schedule floor). Each session creates its own account, agents and triggers, and checks what it
 * shows (a poll that never sees the awaited status fails the session).
 */
const GUIDES = ["docs/guides/webhooks.md", "docs/guides/scripts.md", "docs/guides/schedules.md"];

describe("the automation guides' samples run", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-guides-auto-"));
  // The sessions' scratch files (their `mktemp -d`) go here, and go with it.
  const scratch = mkdtempSync(join(tmpdir(), "agw-guides-auto-scratch-"));
  let server: Launcher | undefined;

  beforeAll(async () => {
    server = await launch(dataDir, { SCHEDULE_MIN_INTERVAL_SECONDS: "5" });
    await waitReady(server, 120_000);
  }, 180_000);

  afterAll(() => {
    if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
    const pids = childPids(dataDir);
    for (const pid of [pids.postgres, pids.temporal]) if (pid && isAlive(pid)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  for (const guide of GUIDES) {
    it(`${guide}: every runnable block, in order, exits 0`, async () => {
      const blocks = codeBlocks(guide);
      expect(blocks.filter((b) => b.runs).length).toBeGreaterThan(3);
      const env = cleanEnv({ DATA_DIR: dataDir, PATH: process.env.PATH ?? "", TMPDIR: scratch });
      const r = await runShellSession(blocks, { port: server!.port, env, timeoutMs: 150_000 });
      expect(r.code, `${guide} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}\n--- npm start\n${server!.output().slice(-4000)}`).toBe(0);
    }, 180_000);
  }
});
