import { MikroORM, type Options } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { PostgresDialect } from "kysely";
import pg from "pg";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { entities } from "./schema.js";

const here = dirname(fileURLToPath(import.meta.url));
/** Running from source (swc loader) or from `dist/`: migrations are discovered next to this file. */
const fromSource = import.meta.url.endsWith(".ts");

// Postgres bigint (int8) arrives as a string by default; our int8 values are micro-USD and ids
// that fit in 2^53. Global, so the ORM and hand-written SQL read the same types.
pg.types.setTypeParser(20, (v) => Number(v));

/** The ORM options without a connection: the CLI config and `openDatabase` add one. */
export function ormOptions(databaseUrl: string, poolSize = 10): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    preferTs: fromSource,
    discovery: { warnWhenNoEntities: true },
    pool: { min: 0, max: poolSize },
    debug: false,
    allowGlobalContext: false,
    migrations: {
      tableName: "mikro_orm_migrations",
      path: join(here, "migrations"),
      pathTs: join(here, "migrations"),
      glob: fromSource ? "!(*.d).ts" : "!(*.d).js",
      transactional: true,
      allOrNothing: true,
      snapshot: true,
      snapshotName: ".snapshot-agent-gateway",
      snapshotOnMigrate: false,
      emit: "ts",
      silent: true,
    },
  };
}

/**
 * The one data layer of a process: MikroORM, and the `pg` pool it runs on. Hand-written hot-path
 * SQL (see ARCHITECTURE.md, "Data access") uses `pool` directly; it is the same pool, so a
 * process never holds more than `poolSize` connections (plus its one LISTEN connection).
 */
export interface Database {
  orm: MikroORM;
  pool: pg.Pool;
}

export interface DatabaseOptions {
  poolSize?: number;
  /** `application_name` of every connection (visible in pg_stat_activity): which process this is. */
  applicationName?: string;
  onPoolError?: (err: Error) => void;
}

/**
 * Opens the pool and hands it to MikroORM as its Kysely dialect. The reverse (taking MikroORM's
 * own pool) would not do: MikroORM's pool parses timestamps as strings, and the hand-written SQL
 * returns them to GraphQL as Dates. MikroORM hydrates Date values as they are.
 * `orm.close()` ends the pool.
 */
export async function openDatabase(databaseUrl: string, options: DatabaseOptions = {}): Promise<Database> {
  const poolSize = options.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    idleTimeoutMillis: 30_000,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
  });
  pool.on("error", (err) => options.onPoolError?.(err));
  // The pool listens for errors of idle connections only: a connection checked out (or being ended
  // by pool.end()) whose backend goes away between queries (a restart, an administrator's
  // termination) would emit an error nobody hears, which ends the process. Its next query fails
  // as it should; the event itself is logged.
  pool.on("connect", (client) => client.on("error", (err) => options.onPoolError?.(err)));
  retryDeadlocks(pool);
  try {
    const orm = await MikroORM.init({ ...ormOptions(databaseUrl, poolSize), driverOptions: new PostgresDialect({ pool }) });
    return { orm, pool };
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
}

/** How many times `pool.query` runs a statement again that PostgreSQL aborted to break a deadlock. */
const DEADLOCK_RETRIES = 3;

/**
 * `pool.query` runs one statement in a transaction of its own (a transaction of several statements
 * checks out a client). When PostgreSQL aborts such a statement to break a deadlock (40P01),
 * nothing of it was applied, so it is run again, as PostgreSQL's documentation advises for this
 * error. One account's concurrent turns lock its balance row from several statements each (the
 * open, a fallback's extra hold and its settle, the finish); the row-lock queue they share, with
 * the foreign key checks of their ledger rows, can form a cycle that PostgreSQL breaks after
 * `deadlock_timeout` (1 s): about once in 1,500 fallback turns at 10 connections on one account,
 * which was a 500. Now such a turn is a second late. Anything else fails at once, as before.
 */
function retryDeadlocks(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  // Once per process (lint:closures).
  pool.query = (async (...args: unknown[]) => {
    // The callback form is the pool's own business (nothing here uses it).
    if (typeof args.at(-1) === "function") return query(...args);
    for (let attempt = 0; ; attempt++) {
      try {
        return await query(...args);
      } catch (err) {
        if (attempt >= DEADLOCK_RETRIES || (err as { code?: unknown }).code !== "40P01") throw err;
      }
    }
  }) as typeof pool.query;
}

/**
 * Closes the ORM and its pool. `orm.close()` ends the pool through Kysely only once Kysely has
 * run a query on it: a process that used the pool alone (the admin CLI) would keep its idle
 * connections, and itself, alive until they time out.
 */
export async function closeDatabase({ orm, pool }: Database): Promise<void> {
  await orm.close(true);
  if (!pool.ended && !pool.ending) await pool.end();
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

/** Opens a short-lived connection, applies pending migrations to `databaseUrl`, closes it. */
export async function migrateDatabase(databaseUrl: string): Promise<string[]> {
  const { orm } = await openDatabase(databaseUrl, { poolSize: 1 });
  try {
    return await migrate(orm);
  } finally {
    await orm.close(true);
  }
}
