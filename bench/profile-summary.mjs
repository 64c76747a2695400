// node bench/profile-summary.mjs <file.cpuprofile>: self time by package/file and by function (profiles from
// BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>" npm run bench:chat).
import { readFileSync } from "node:fs";
const p = JSON.parse(readFileSync(process.argv[2], "utf8"));
const dt = new Map(); // node id -> self time
const deltas = p.timeDeltas; const samples = p.samples;
for (let i = 0; i < samples.length; i++) dt.set(samples[i], (dt.get(samples[i]) ?? 0) + (deltas[i] ?? 0));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const agg = new Map();
const aggFile = new Map();
for (const [id, t] of dt) {
  const n = byId.get(id); const cf = n.callFrame;
  const key = `${cf.functionName || "(anon)"} ${cf.url.replace(/^.*node_modules\//, "nm/").replace(/^file:\/\/.*\/dist\//, "dist/")}:${cf.lineNumber}`;
  agg.set(key, (agg.get(key) ?? 0) + t);
  let f = cf.url.replace(/^file:\/\//, "");
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f);
  f = m ? `nm:${m[1]}` : f.includes("/dist/") ? `dist:${f.split("/dist/")[1]}` : (f || `(${cf.functionName})`);
  aggFile.set(f, (aggFile.get(f) ?? 0) + t);
}
const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, t]) => `${(100 * t / total).toFixed(1).padStart(5)}%  ${k}`).join("\n");
console.log("total ms", (total / 1000).toFixed(0));
console.log("--- by file/package"); console.log(top(aggFile, 25));
console.log("--- by function"); console.log(top(agg, 30));
