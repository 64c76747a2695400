#!/usr/bin/env node
// `npm run lint:deps`: the import rules of ARCHITECTURE.md, checked on dependency-cruiser's graph.
//  1. the rules in .dependency-cruiser.cjs (no module cycles; workflows/ imports only
//     @temporalio/workflow and types; production code imports no test code);
//  2. no cycles between folders: the top-level folders of src/ (src/chat/testing counts as
//     src/chat) and of web/src/, type-only imports included.
// Known violations that are being removed are listed in ALLOWED below, each with who removes it.
//  3. the folder map in ARCHITECTURE.md (each folder's imports) matches the code;
//     `npm run lint:deps -- --write-map` regenerates its import column.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

/**
 * Known folder edges (`from -> to`) and module cycles that another helper is removing. Remove an
 * entry as soon as its fix is on main; an entry that no longer matches anything is reported.
 */
const ALLOWED = [
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

// 3. the folder map of ARCHITECTURE.md.
const MAP_FILE = "ARCHITECTURE.md";
const START = "<!-- folder-map:start: generated imports column, npm run lint:deps -- --write-map -->";
const END = "<!-- folder-map:end -->";
const doc = readFileSync(MAP_FILE, "utf8");
const [before, rest] = doc.split(START);
if (rest === undefined || !rest.includes(END)) problems.push(`${MAP_FILE}: the folder map markers are missing`);
else {
  const [table, after] = rest.split(END);
  const jobs = new Map();
  for (const line of table.split("\n")) {
    const m = /^\| `([^`]+)\/` \| (.*) \| .* \|$/.exec(line);
    if (m) jobs.set(m[1], m[2]);
  }
  const folders = new Set();
  for (const mod of result.modules) {
    const f = folderOf(mod.source);
    if (f) folders.add(f);
  }
  const imports = new Map([...folders].map((f) => [f, new Set()]));
  for (const key of edges.keys()) {
    const [a, b] = key.split(" -> ");
    imports.get(a)?.add(b);
  }
  const short = (from, to) => (from.startsWith("web/src/") && to.startsWith("web/src/") ? to.slice(8) : from.startsWith("src/") ? to.slice(4) : to);
  const order = (a, b) => (a.startsWith("web/") === b.startsWith("web/") ? a.localeCompare(b) : a.startsWith("web/") ? 1 : -1);
  const rows = [...folders].sort(order).map((f) => {
    const deps = [...imports.get(f)].sort(order).map((d) => `\`${short(f, d)}\``).join(", ") || "—";
    return `| \`${f}/\` | ${jobs.get(f) ?? "TODO: its one job"} | ${deps} |`;
  });
  const generated = `\n| folder | its one job | imports (folders) |\n|---|---|---|\n${rows.join("\n")}\n`;
  if (process.argv.includes("--write-map")) {
    writeFileSync(MAP_FILE, before + START + generated + END + after);
    process.stdout.write(`${MAP_FILE}: folder map written (${rows.length} folders)\n`);
  } else if (generated !== table) {
    problems.push(`${MAP_FILE}: the folder map does not match the imports (run npm run lint:deps -- --write-map, then check the "one job" column)`);
  }
  for (const f of folders) if (!jobs.has(f) && !process.argv.includes("--write-map")) problems.push(`${MAP_FILE}: folder ${f}/ has no line in the folder map`);
}

for (const a of ALLOWED) if (!used.has(a)) process.stderr.write(`note: allowlist entry no longer needed, remove it: ${a.edge ?? a.cycle} (${a.owner})\n`);
if (problems.length) {
  process.stderr.write(`Dependency check failed (${problems.length}):\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`Dependency check passed: ${result.summary.totalCruised} modules, ${edges.size} folder edges, no cycles (${used.size} allowlisted).\n`);
