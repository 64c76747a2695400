import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, runShellSession } from "../helpers/doc-samples.js";
import { stopLauncher, cleanEnv, launch, waitReady, type Launcher } from "../helpers/launcher.js";

/**
 * The docs' samples run as written: each file's runnable blocks, in order, as one terminal session
 * beside one `npm start` (its model simulator answering), as a reader pastes them. Each session
 * starts from nothing but the running server: it makes its own account, agents and keys.
 */
const FILES = [
  "README.md",
  "docs/getting-started.md",
  "docs/guides/chat.md",
  "docs/guides/a2a.md",
  "docs/guides/mcp.md",
  "docs/guides/graphql.md",
  "docs/guides/console.md",
];

/** The Python clients' venv (CI has it); outside CI a file with Python samples is skipped without it. */
const python = process.env.OPENAI_PYTHON;
const hasPython = !!python && existsSync(python);

describe("the docs' samples, against npm start", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-doc-samples-"));
  let l: Launcher;
  beforeAll(async () => {
    l = await launch(dataDir);
    await waitReady(l, 180_000);
  });
  afterAll(async () => {
    await stopLauncher(l, dataDir);
  });

  for (const file of FILES) {
    const blocks = codeBlocks(file);
    const needsPython = blocks.some((b) => b.runs && b.lang === "python");
    it.skipIf(needsPython && !hasPython)(`${file}: its runnable blocks run as one session`, async () => {
      expect(blocks.filter((b) => b.runs).length).toBeGreaterThan(0);
      const result = await runShellSession(blocks, { port: l.port, env: cleanEnv({ DATA_DIR: dataDir }), python, timeoutMs: 240_000 });
      expect(result.code, `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`).toBe(0);
    }, 300_000);
  }
});
