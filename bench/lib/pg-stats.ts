import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type pg from "pg";

/**
 * What PostgreSQL did, read from PostgreSQL itself, for bench/capacity.ts: cumulative counters
 * (transactions, tuples per table, WAL, WAL fsyncs) snapshotted around a phase, pg_stat_statements
 * per statement, WAL by resource manager (pg_walinspect), the postgres processes' CPU time, and a
 * sampler of what the gateway's backends wait on (and whether an account row is locked).
 *
 * Counters other backends keep (pg_stat_database, pg_stat_user_tables, pg_stat_wal, pg_stat_io)
 * reach the shared view when a backend flushes its pending statistics: at the latest 10 s after its
 * last transaction (PGSTAT_IDLE_INTERVAL), so a snapshot is taken after `STATS_SETTLE_MS` of quiet.
 * The LSN and pg_stat_statements are exact at once.
 */
export const STATS_SETTLE_MS = 11_500;

export interface Snapshot {
  at: number;
  lsn: string;
  xactCommit: number;
  xactRollback: number;
  walRecords: number;
  walFpi: number;
  walBytes: number;
  walFsyncs: number;
  walWrites: number;
  tables: Record<string, { ins: number; upd: number; hot: number; del: number }>;
}

export async function snapshot(c: pg.Client): Promise<Snapshot> {
  await c.query("select pg_stat_clear_snapshot()");
  const { rows } = await c.query(`
    select pg_current_wal_lsn()::text as lsn,
           (select xact_commit from pg_stat_database where datname = current_database())::float8 as xact_commit,
           (select xact_rollback from pg_stat_database where datname = current_database())::float8 as xact_rollback,
           (select wal_records from pg_stat_wal)::float8 as wal_records,
           (select wal_fpi from pg_stat_wal)::float8 as wal_fpi,
           (select wal_bytes from pg_stat_wal)::float8 as wal_bytes,
           (select coalesce(sum(fsyncs), 0) from pg_stat_io where object = 'wal')::float8 as wal_fsyncs,
           (select coalesce(sum(writes), 0) from pg_stat_io where object = 'wal')::float8 as wal_writes,
           (select json_object_agg(relname, json_build_array(n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del)) from pg_stat_user_tables) as tables`);
  const r = rows[0];
  const tables: Snapshot["tables"] = {};
  for (const [name, [ins, upd, hot, del]] of Object.entries(r.tables ?? {}) as [string, number[]][]) tables[name] = { ins: ins!, upd: upd!, hot: hot!, del: del! };
  return {
    at: Date.now(),
    lsn: r.lsn,
    xactCommit: r.xact_commit,
    xactRollback: r.xact_rollback,
    walRecords: r.wal_records,
    walFpi: r.wal_fpi,
    walBytes: r.wal_bytes,
    walFsyncs: r.wal_fsyncs,
    walWrites: r.wal_writes,
    tables,
  };
}

/** The counters' differences between two snapshots, and the WAL between their LSNs. */
export type Delta = Omit<Snapshot, "at" | "lsn"> & { seconds: number; walLsnBytes: number };

export async function delta(c: pg.Client, a: Snapshot, b: Snapshot): Promise<Delta> {
  const { rows } = await c.query<{ d: string }>("select ($2::pg_lsn - $1::pg_lsn)::text as d", [a.lsn, b.lsn]);
  const tables: Delta["tables"] = {};
  for (const [name, t] of Object.entries(b.tables)) {
    const p = a.tables[name] ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const d = { ins: t.ins - p.ins, upd: t.upd - p.upd, hot: t.hot - p.hot, del: t.del - p.del };
    if (d.ins || d.upd || d.del) tables[name] = d;
  }
  return {
    seconds: (b.at - a.at) / 1000,
    walLsnBytes: Number(rows[0]!.d),
    xactCommit: b.xactCommit - a.xactCommit,
    xactRollback: b.xactRollback - a.xactRollback,
    walRecords: b.walRecords - a.walRecords,
    walFpi: b.walFpi - a.walFpi,
    walBytes: b.walBytes - a.walBytes,
    walFsyncs: b.walFsyncs - a.walFsyncs,
    walWrites: b.walWrites - a.walWrites,
    tables,
  };
}

export interface StatementStat {
  query: string;
  calls: number;
  meanMs: number;
  rows: number;
  walBytes: number;
  walRecords: number;
  walFpi: number;
}

/** pg_stat_statements of this database, run by `user` (the gateway's role; the bench's own queries run as another). */
export async function statementStats(c: pg.Client, user: string): Promise<StatementStat[]> {
  const { rows } = await c.query(
    `select query, calls::float8 as calls, mean_exec_time as mean, rows::float8 as rows, wal_bytes::float8 as wal_bytes, wal_records::float8 as wal_records, wal_fpi::float8 as wal_fpi
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
        and userid = (select oid from pg_roles where rolname = $1) order by calls desc`,
    [user],
  );
  return rows.map((r) => ({ query: r.query, calls: r.calls, meanMs: r.mean, rows: r.rows, walBytes: r.wal_bytes, walRecords: r.wal_records, walFpi: r.wal_fpi }));
}

/** WAL between two LSNs by resource manager (Heap, Btree, Transaction, …): records, bytes, of which full-page images. */
export async function walByKind(c: pg.Client, from: string, to: string): Promise<{ kind: string; records: number; bytes: number; fpiBytes: number }[]> {
  const { rows } = await c.query(
    `select "resource_manager/record_type" as kind, count::float8 as records, combined_size::float8 as bytes, fpi_size::float8 as fpi
       from pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, false) where count > 0 order by combined_size desc`,
    [from, to],
  );
  return rows.map((r) => ({ kind: r.kind, records: r.records, bytes: r.bytes, fpiBytes: r.fpi }));
}

/** Collapses what differs between a statement's text and pg_stat_statements' normalised form of it (constants become $n there). */
const normalise = (q: string) =>
  q
    .replace(/'(?:[^']|'')*'/g, "?")
    .replace(/\$\d+/g, "?")
    .replace(/\b\d+(?:\.\d+)?\b/g, "?")
    .replace(/\b(?:true|false)\b/gi, "?")
    .replace(/-\?/g, "?")
    .replace(/\s+/g, "")
    .toLowerCase();

/**
 * Names statements the way the code does: the text → name registry of src/db/statement.ts, filled
 * by importing (from the measured build's dist/) every module that builds statements. A query no
 * named statement matches (MikroORM's, or plain `pool.query` text) is shown by its first words.
 */
export async function statementNamer(root: string): Promise<(query: string) => string> {
  const dist = join(root, "dist/src");
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".js") && !p.endsWith(".test.js") && /from "(?:\.\.?\/)+(?:db\/)?statement\.js"/.test(readFileSync(p, "utf8"))) files.push(p);
    }
  };
  walk(dist);
  for (const f of files) await import(pathToFileURL(f).href);
  const registry = (await import(pathToFileURL(join(dist, "db/statement.js")).href)) as { statementNames?: () => ReadonlyMap<string, string> };
  const byText = new Map<string, string>();
  for (const [text, name] of registry.statementNames?.() ?? []) byText.set(normalise(text), name);
  return (query) => {
    // pg_stat_activity cuts a query at track_activity_query_size: a prefix of a named statement names it too.
    const q = normalise(query);
    let name = byText.get(q);
    // Else the named statement sharing the longest prefix, if that is nearly all of it (pg_stat_statements numbers constants its own way).
    if (!name && q.length >= 80) {
      let best = 0;
      for (const [text, n] of byText) {
        let i = 0;
        while (i < text.length && i < q.length && text[i] === q[i]) i++;
        if (i > best && i >= 0.9 * Math.min(text.length, q.length)) [best, name] = [i, n];
      }
    }
    if (name) return `\`${name}\``;
    const flat = query.replace(/\s+/g, " ").trim();
    return `\`${(flat.length > 90 ? `${flat.slice(0, 90)}…` : flat).replace(/\|/g, "\\|")}\``;
  };
}

/** utime + stime (ms) of one process. */
export function processCpuMs(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** utime + stime (ms) of the postmaster and every process it started (backends, WAL writer, checkpointer…), exited children included. */
export function postgresCpuMs(postmasterPid: number): number {
  const stat = (pid: string) => {
    try {
      const s = readFileSync(`/proc/${pid}/stat`, "utf8");
      return s.slice(s.lastIndexOf(")") + 2).split(" ");
    } catch {
      return undefined;
    }
  };
  const tick = 10; // CLK_TCK = 100 on Linux
  let ms = 0;
  const own = stat(String(postmasterPid));
  if (!own) return NaN;
  ms += (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * tick; // + cutime/cstime: children that exited
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const f = stat(pid);
    if (f && Number(f[1]) === postmasterPid) ms += (Number(f[11]) + Number(f[12])) * tick;
  }
  return ms;
}

/** Busy and total jiffies of the whole machine (/proc/stat), for its CPU use over an interval. */
export function machineTicks(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3]! + (f[4] ?? 0);
  return { busy: total - idle, total };
}

export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);
}

export interface WaitSamples {
  samples: number;
  /** Share of samples in which a row of the table was locked for update (a balance change) by a running transaction; FOR KEY SHARE locks of foreign-key checks, which block no update, are not counted. */
  rowLockedShare: number;
  /** statement label → wait ("CPU" when active and not waiting) → backends seen. */
  byStatement: Map<string, Map<string, number>>;
}

/**
 * Samples, as fast as one connection allows, the gateway's active backends (what each runs and
 * waits on: Lock:transactionid is a row-lock wait, IO:WalSync / LWLock:WALWrite the commit's WAL
 * flush, no wait event = on CPU or runnable) and whether any row of `lockedTable` is locked
 * (pgrowlocks). Stop with the returned function.
 */
export function sampleWaits(c: pg.Client, user: string, lockedTable: string, name: (q: string) => string): () => Promise<WaitSamples> {
  // Its own queries commit too (xact_commit counts them) and cost PostgreSQL CPU: callers subtract `samples` commits and its backend's CPU.
  const result: WaitSamples = { samples: 0, rowLockedShare: 0, byStatement: new Map() };
  let locked = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await c.query(
        `select (select count(*) from pgrowlocks($2) where exists (select 1 from unnest(modes) m where m like '%Update%'))::int as locked,
                coalesce((select json_agg(json_build_array(coalesce(wait_event_type || ':' || wait_event, 'CPU'), query)) from pg_stat_activity
                           where datname = current_database() and usename = $1 and state = 'active' and backend_type = 'client backend'), '[]'::json) as active`,
        [user, lockedTable],
      );
      result.samples++;
      if (rows[0].locked > 0) locked++;
      for (const [wait, query] of rows[0].active as [string, string][]) {
        const label = name(query);
        const m = result.byStatement.get(label) ?? new Map<string, number>();
        m.set(wait, (m.get(wait) ?? 0) + 1);
        result.byStatement.set(label, m);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    running = false;
    await loop;
    result.rowLockedShare = result.samples ? locked / result.samples : 0;
    return result;
  };
}
