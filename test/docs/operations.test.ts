import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, repoRoot, runShellSession, type SessionResult } from "../helpers/doc-samples.js";
import { stopLauncher, cleanEnv, launch, waitReady, type Launcher } from "../helpers/launcher.js";

/**
 * The operations docs (docs/operations/) as an operator pastes them: each file's runnable samples,
 * in order, as one terminal session against a fresh `npm start`. Production-only commands are
 * fenced `no-run`; what is left must work on a developer's machine.
 */
const DIR = "docs/operations";
const files = readdirSync(join(repoRoot, DIR)).filter((f) => f.endsWith(".md")).map((f) => `${DIR}/${f}`);

describe("docs/operations samples", { timeout: 180_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-docs-ops-"));
  let l: Launcher | undefined;

  beforeAll(async () => {
    l = await launch(dataDir);
    await waitReady(l);
  });

  afterAll(async () => {
    await stopLauncher(l, dataDir);
  });

  it("the ops index links every page", () => {
    const index = readFileSync(join(repoRoot, DIR, "README.md"), "utf8");
    for (const f of files.filter((f) => !f.endsWith("/README.md"))) expect(index, f).toContain(`](${f.slice(DIR.length + 1)})`);
  });

  const sessions = new Map<string, SessionResult>();

  it.each(files)("%s: its runnable samples run as one session", async (file) => {
    const result = await runShellSession(codeBlocks(file), { port: l!.port, env: cleanEnv({ DATA_DIR: dataDir }) });
    sessions.set(file, result);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  });

  it("admin-cli.md: the top-up's JSON and /readyz are what the page shows", () => {
    const result = sessions.get(`${DIR}/admin-cli.md`)!;
    expect(result.stdout).toMatch(/\{"accountId":"acc_\w+","balance":"15\.000000"\}/);
    expect(result.stdout).toContain('"status":"ready"');
    expect(result.stderr).toContain(`wrote to the database of npm start`);
  });
});
