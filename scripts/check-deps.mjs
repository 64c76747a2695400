#!/usr/bin/env node
// `npm run lint:deps`: the import rules of ARCHITECTURE.md, checked on dependency-cruiser's graph.
//  1. the rules in .dependency-cruiser.cjs (no module cycles; workflows/ imports only
//     @temporalio/workflow and types; production code imports no test code);
//  2. no cycles between folders: the top-level folders of src/ (src/chat/testing counts as
//     src/chat) and of web/src/, type-only imports included.
// Known violations that are being removed are listed in ALLOWED below, each with who removes it.
import { execFileSync } from "node:child_process";

/**
 * Known folder edges (`from -> to`) and module cycles that another helper is removing. Remove an
 * entry as soon as its fix is on main; an entry that no longer matches anything is reported.
 */
const ALLOWED = [
  // faults (issue 9 in webhooks/, triggers/, jobs/routes, jobs/dispatcher): webhooks → triggers → agents, webhooks → jobs.
  { edge: "src/jobs -> src/webhooks", owner: "faults" },
  { edge: "src/triggers -> src/webhooks", owner: "faults" },
  { edge: "src/jobs -> src/triggers", owner: "faults" },
];

const roots = ["src", "web/src", "workflows"];
const out = execFileSync("npx", ["--no-install", "depcruise", ...roots, "--config", ".dependency-cruiser.cjs", "--output-type", "json"], {
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024,
  stdio: ["ignore", "pipe", "inherit"],
});
const result = JSON.parse(out);
const used = new Set();
const problems = [];

// 1. dependency-cruiser's own rules.
for (const v of result.summary.violations) {
  const allowed = v.rule.name === "no-module-cycles" && ALLOWED.find((a) => a.cycle === v.from);
  if (allowed) {
    used.add(allowed);
    continue;
  }
  const via = v.cycle?.length ? ` (cycle: ${[v.from, ...v.cycle.map((c) => c.name ?? c)].join(" -> ")})` : "";
  problems.push(`${v.rule.name}: ${v.from} -> ${v.to}${via}`);
}

// 2. folder cycles.
const folderOf = (path) => {
  const m = /^(src|web\/src)\/([^/]+)\//.exec(path);
  return m ? `${m[1]}/${m[2]}` : undefined;
};
const edges = new Map(); // "a -> b" -> example "file -> file"
for (const mod of result.modules) {
  const from = folderOf(mod.source);
  if (!from) continue;
  for (const dep of mod.dependencies) {
    const to = folderOf(dep.resolved);
    if (!to || to === from) continue;
    const key = `${from} -> ${to}`;
    if (!edges.has(key)) edges.set(key, `${mod.source} -> ${dep.resolved}`);
  }
}
const graph = new Map();
for (const key of edges.keys()) {
  const allowed = ALLOWED.find((a) => a.edge === key);
  if (allowed) {
    used.add(allowed);
    continue;
  }
  const [a, b] = key.split(" -> ");
  if (!graph.has(a)) graph.set(a, []);
  graph.get(a).push(b);
}
// Tarjan's strongly connected components: every component of more than one folder is a cycle.
let index = 0;
const idx = new Map(), low = new Map(), stack = [], onStack = new Set(), components = [];
const visit = (v) => {
  idx.set(v, index), low.set(v, index++), stack.push(v), onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!idx.has(w)) visit(w), low.set(v, Math.min(low.get(v), low.get(w)));
    else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do (w = stack.pop()), onStack.delete(w), c.push(w);
    while (w !== v);
    if (c.length > 1) components.push(c);
  }
};
for (const v of graph.keys()) if (!idx.has(v)) visit(v);
for (const c of components) {
  const inside = new Set(c);
  const lines = [...edges].filter(([k]) => { const [a, b] = k.split(" -> "); return inside.has(a) && inside.has(b) && !ALLOWED.some((x) => x.edge === k); });
  problems.push(`folder cycle among ${c.sort().join(", ")}:\n${lines.map(([k, ex]) => `      ${k.padEnd(36)} e.g. ${ex}`).join("\n")}`);
}

for (const a of ALLOWED) if (!used.has(a)) process.stderr.write(`note: allowlist entry no longer needed, remove it: ${a.edge ?? a.cycle} (${a.owner})\n`);
if (problems.length) {
  process.stderr.write(`Dependency check failed (${problems.length}):\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`Dependency check passed: ${result.summary.totalCruised} modules, ${edges.size} folder edges, no cycles (${used.size} allowlisted).\n`);
