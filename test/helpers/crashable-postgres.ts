import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "../../src/dev/embedded-postgres.js";
import { migrateDatabase } from "../../src/db/orm.js";

/**
 * A PostgreSQL of a test's own, with a migrated database `app`, set up so that a crash really
 * loses what was not flushed: the WAL writer slowed to 10 s, and nothing else flushing WAL early
 * (the background writer flushes WAL up to a dirty page it writes out; autovacuum commits
 * synchronously). `crash()` is an immediate shutdown (SIGQUIT: WAL buffers are not written),
 * then a restart on the same port.
 */
export interface CrashablePostgres {
  /** The `app` database. */
  url: string;
  /** A client on the `postgres` database as superuser, for the duration of `f`. */
  admin<T>(f: (c: pg.Client) => Promise<T>): Promise<T>;
  /** One statement on `app`, its rows. */
  query(sql: string, values?: unknown[]): Promise<any[]>;
  crash(): Promise<void>;
  /** Stops it and deletes its files. */
  stop(): Promise<void>;
}

export async function startCrashablePostgres(name: string): Promise<CrashablePostgres> {
  const dir = mkdtempSync(join(tmpdir(), `agw-${name}-`));
  const dataDir = join(dir, "pg");
  let server: EmbeddedPostgresHandle = await startEmbeddedPostgres(dataDir);
  await server.ensureDatabase("app");
  const url = server.urlFor("app");
  await migrateDatabase(url);
  const withClient = async <T>(connectionString: string, f: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString });
    await c.connect();
    try {
      return await f(c);
    } finally {
      await c.end();
    }
  };
  const admin = <T>(f: (c: pg.Client) => Promise<T>) => withClient(server.adminUrl, f);
  await admin(async (c) => {
    await c.query("alter system set wal_writer_delay = '10s'");
    await c.query("alter system set bgwriter_lru_maxpages = 0");
    await c.query("alter system set autovacuum = off");
    await c.query("select pg_reload_conf()");
  });
  return {
    url,
    admin,
    query: (sql, values = []) => withClient(url, async (c) => (await c.query(sql, values)).rows),
    async crash() {
      const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(postmaster, "SIGQUIT");
      await server.exited;
      server = await startEmbeddedPostgres(dataDir, { port: server.port });
    },
    async stop() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
