import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BENCHES, writeSection } from "../bench/lib/harness.js";

/**
 * BENCHMARKS.md shows each benchmark's latest run: a run replaces its own section (the one it
 * replaced moves to bench/history/), and a two-build comparison goes to the history only.
 */
describe("a bench run's section", () => {
  const cwd = process.cwd();
  let dir: string;
  const read = (file: string) => readFileSync(join(dir, file), "utf8");
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agw-bench-sections-"));
    process.chdir(dir);
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    vi.stubEnv("BENCH_WRITE", "");
    vi.stubEnv("BENCH_SECTION", "");
    vi.stubEnv("BENCH_COMPARISON", "");
    writeFileSync("BENCHMARKS.md", "# Benchmarks\n\nThe guide, written by hand.\n\n## Webhooks\n\nCommand: `npm run bench:webhooks`. Run 1.\n");
  });
  afterEach(() => {
    process.chdir(cwd);
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    rmSync(dir, { recursive: true, force: true });
  });

  it("replaces the benchmark's previous run, which moves to its history file", () => {
    writeSection(BENCHES.chat, "Chat run 1.");
    writeSection(BENCHES.chat, "Chat run 2.");
    writeSection(BENCHES.webhooks, "Webhooks run 2.");
    expect(read("BENCHMARKS.md")).toBe("# Benchmarks\n\nThe guide, written by hand.\n\n## Webhooks\n\nWebhooks run 2.\n\n## Chat\n\nChat run 2.\n");
    const chat = read("bench/history/chat.md");
    expect(chat.startsWith("# Chat: earlier runs\n")).toBe(true);
    expect(chat.endsWith("\n\n## Chat\n\nChat run 1.\n")).toBe(true);
    expect(read("bench/history/webhooks.md").endsWith("\n\n## Webhooks\n\nCommand: `npm run bench:webhooks`. Run 1.\n")).toBe(true);
  });

  it("keeps a labelled variant in its own section, replaced by the next run with that label", () => {
    vi.stubEnv("BENCH_SECTION", "agent protocols");
    writeSection(BENCHES.chat, "Protocols run 1.");
    writeSection(BENCHES.chat, "Protocols run 2.");
    expect(read("BENCHMARKS.md")).toContain("\n## Chat (agent protocols)\n\nProtocols run 2.\n");
    expect(read("BENCHMARKS.md")).not.toContain("Protocols run 1.");
    expect(read("bench/history/chat.md")).toContain("\n## Chat (agent protocols)\n\nProtocols run 1.\n");
  });

  it("adds a comparison of two builds to the history only, after the earlier ones", () => {
    vi.stubEnv("BENCH_COMPARISON", "before/after: a → b");
    writeSection(BENCHES.chat, "Comparison 1.");
    vi.stubEnv("BENCH_COMPARISON", "before/after: b → c");
    writeSection(BENCHES.chat, "Comparison 2.");
    expect(read("BENCHMARKS.md")).not.toContain("## Chat");
    const chat = read("bench/history/chat.md");
    expect(chat.indexOf("## Chat (before/after: a → b)\n\nComparison 1.")).toBeLessThan(chat.indexOf("## Chat (before/after: b → c)\n\nComparison 2."));
  });
});
