import { execFile } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The official A2A conformance kit (a2aproject/a2a-tck, pinned in ../shared/tools), run as its
 * `run_tck.py` runs it, and its pytest-json-report files read back. The kit writes its reports
 * into its own folder, so each run gets a scratch copy; its venv (.ci/run) lives outside it.
 */

export const KIT_COMMIT = "410ba92e";
export const kitDir = () => resolve(process.env.A2A_TCK_DIR ?? "../shared/tools/a2a-tck");
export const kitPython = () => process.env.A2A_TCK_PYTHON ?? join(homedir(), ".cache/agent-gateway", `a2a-tck-venv-${KIT_COMMIT}`, "bin/python");

export type Outcome = "passed" | "failed" | "error" | "skipped" | "xfailed" | "xpassed";

export interface KitResult {
  agent: string;
  category: string;
  transport: string;
  test: string;
  outcome: Outcome;
  /** The assertion's text for a failure (short), for the test's message. */
  why?: string;
}

/** Copies the kit (without its reports) into `dir`. */
export function copyKit(dir: string): void {
  cpSync(kitDir(), dir, { recursive: true, filter: (src) => !/[/\\](reports|__pycache__|\.venv|\.git)([/\\]|$)/.test(src.slice(kitDir().length)) });
}

/** One `run_tck.py --category all` of an agent over the given transports. */
export function runKit(dir: string, sutUrl: string, key: string, transports: string[], timeoutMs: number): Promise<{ code: number; output: string; timedOut: boolean }> {
  return new Promise((ok) => {
    execFile(
      kitPython(),
      ["run_tck.py", "--sut-url", sutUrl, "--category", process.env.A2A_TCK_CATEGORY ?? "all", "--transports", transports.join(","), "--compliance-report", "compliance-report.json"],
      {
        cwd: dir,
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        // (--compliance-report: without it the kit deletes its per-category JSON reports at the end.)
        // The kit reads its credential from these (tck/config.py); its own timeouts stay the defaults.
        env: { ...process.env, A2A_AUTH_TYPE: "bearer", A2A_AUTH_TOKEN: key, PYTHONDONTWRITEBYTECODE: "1", NO_COLOR: "1" },
      },
      (err, stdout, stderr) => ok({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}`, timedOut: !!(err as { killed?: boolean } | null)?.killed }),
    );
  });
}

interface PytestJson {
  tests?: { nodeid: string; outcome: Outcome; setup?: Phase; call?: Phase; teardown?: Phase }[];
}
interface Phase {
  outcome?: string;
  longrepr?: string;
  crash?: { message?: string };
}

/** Every test outcome of the reports a run left in `dir/reports` (`<category>_<transport>_results.json`). */
export function readReports(dir: string, agent: string): KitResult[] {
  const out: KitResult[] = [];
  const reports = join(dir, "reports");
  if (!existsSync(reports)) return out;
  for (const file of readdirSync(reports)) {
    const m = /^(mandatory|capabilities|quality|features|transport-equivalence)(?:_(.+))?_results\.json$/.exec(file);
    if (!m) continue;
    const json = JSON.parse(readFileSync(join(reports, file), "utf8")) as PytestJson;
    for (const t of json.tests ?? []) {
      const failed = [t.setup, t.call, t.teardown].find((p) => p?.outcome === "failed");
      out.push({
        agent,
        category: m[1]!,
        transport: m[2] ?? "all",
        test: t.nodeid,
        outcome: t.outcome,
        ...(failed ? { why: (failed.crash?.message ?? failed.longrepr ?? "").slice(0, 400) } : {}),
      });
    }
  }
  return out;
}

export interface KnownKitBug {
  /** A short name for the table. */
  id: string;
  /** pytest node ids, or prefixes of them ending in `::` (a class or file) or `[` (every parameter). */
  tests: string[];
  /** Where it applies; absent: every agent / transport. */
  agents?: string[];
  transports?: string[];
  /** The spec text (proto or prose, section) showing the kit is wrong. */
  spec: string;
  why: string;
  /** Whether the reference server (the kit's python-sut on a2a-sdk) fails it too, and why. */
  reference: string;
}

/** test/a2a-tck/known-kit-bugs.json: the harness's corrections of the kit, and failures of its own making. */
export interface KnownKitBugs {
  harness: { what: string; spec: string; why: string }[];
  failures: KnownKitBug[];
}

export const isFailure = (r: KitResult) => r.outcome === "failed" || r.outcome === "error";

const matches = (pattern: string, test: string) => pattern === test || ((pattern.endsWith("::") || pattern.endsWith("[")) && test.startsWith(pattern));

export function knownBugFor(r: KitResult, bugs: KnownKitBug[]): KnownKitBug | undefined {
  return bugs.find((b) => b.tests.some((t) => matches(t, r.test)) && (!b.agents || b.agents.includes(r.agent)) && (!b.transports || b.transports.includes(r.transport)));
}
