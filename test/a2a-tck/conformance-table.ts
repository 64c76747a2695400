import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { isFailure, KIT_COMMIT, knownBugFor, type KitResult, type KnownKitBugs } from "./kit.js";

/**
 * Writes docs/design/a2a.md's conformance table from a kit run (tck.test.ts with A2A_TCK_WRITE_DOCS=1),
 * between its two markers, so the figures are the run's and never typed by hand.
 */
const BEGIN = "<!-- a2a-tck:begin (written by test/a2a-tck/tck.test.ts with A2A_TCK_WRITE_DOCS=1; do not edit) -->";
const END = "<!-- a2a-tck:end -->";
const CATEGORIES = ["mandatory", "capabilities", "quality", "features", "transport-equivalence"];
const BINDING: Record<string, string> = { jsonrpc: "JSON-RPC", rest: "HTTP+JSON", all: "both" };

export function conformanceTable(run: { results: KitResult[]; known: KnownKitBugs; seconds: number; commit: string; date: Date }): string {
  const { results } = run;
  const bugs = run.known.failures;
  const lines = [
    BEGIN,
    `Run of ${run.date.toISOString().slice(0, 16).replace("T", " ")} UTC on commit \`${run.commit}\`, kit a2aproject/a2a-tck \`${KIT_COMMIT}\`, ` +
      `${run.seconds} s wall time for both agents (one after the other). Passed / failed as a known kit bug / failed otherwise / skipped (the kit skips what the card does not declare):`,
    "",
    "| category | binding | chat agent | automation agent |",
    "|---|---|---|---|",
  ];
  const cell = (rs: KitResult[]) => {
    const known = rs.filter((r) => isFailure(r) && knownBugFor(r, bugs)).length;
    const other = rs.filter((r) => isFailure(r) && !knownBugFor(r, bugs)).length;
    return `${rs.filter((r) => r.outcome === "passed" || r.outcome === "xpassed").length} / ${known} / ${other} / ${rs.filter((r) => r.outcome === "skipped" || r.outcome === "xfailed").length}`;
  };
  for (const category of CATEGORIES) {
    const transports = [...new Set(results.filter((r) => r.category === category).map((r) => r.transport))].sort();
    for (const t of transports) {
      const of = (agent: string) => results.filter((r) => r.category === category && r.transport === t && r.agent === agent);
      lines.push(`| ${category} | ${BINDING[t] ?? t} | ${cell(of("chat"))} | ${cell(of("automation"))} |`);
    }
  }
  lines.push("", "Corrections of the kit in the harness (test/a2a-tck/agent-host.ts), each a kit bug:", "");
  for (const h of run.known.harness) lines.push(`- ${h.what} ${h.why} Spec: ${h.spec}`);
  lines.push("", "Known kit bugs (test/a2a-tck/known-kit-bugs.json): failures of the kit's own making, each with the spec text it contradicts.", "");
  if (bugs.length === 0) lines.push("None.");
  for (const b of bugs) {
    const hit = results.filter((r) => isFailure(r) && knownBugFor(r, [b]) === b).length;
    lines.push(`- **${b.id}**${b.transports ? ` (${b.transports.map((t) => BINDING[t] ?? t).join(", ")} only)` : ""}, ${hit} failure${hit === 1 ? "" : "s"} in this run: ${b.why} Spec: ${b.spec} Reference server: ${b.reference} Tests: ${b.tests.map((t) => `\`${t.replace(/^tests\//, "")}\``).join(", ")}.`);
  }
  lines.push(END);
  return lines.join("\n");
}

export function writeConformanceTable(run: Parameters<typeof conformanceTable>[0], file = resolve("docs/design/a2a.md")): void {
  const doc = readFileSync(file, "utf8");
  const start = doc.indexOf(BEGIN.slice(0, 20));
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${file} has no conformance table markers`);
  writeFileSync(file, doc.slice(0, start) + conformanceTable(run) + doc.slice(end + END.length));
}
