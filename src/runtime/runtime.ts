import type { MikroORM } from "@mikro-orm/postgresql";
import pg from "pg";
import type { Config } from "../config/config.js";
import { openOrm } from "../db/orm.js";
import { createLogger, type Logger } from "../infra/logger.js";
import { Metrics } from "../infra/metrics.js";
import { PgEvents } from "../infra/pg-events.js";
import { TemporalClientHandle } from "../temporal/client.js";
import type { ScriptValidator } from "../agents/service.js";
import { scriptValidator } from "../sandbox/index.js";

/**
 * What every process shares: configuration, logger, database (MikroORM for the model, a plain
 * pg pool for hand-written hot-path SQL), cross-instance events and a Temporal client.
 */
export interface Runtime {
  config: Config;
  log: Logger;
  orm: MikroORM;
  pool: pg.Pool;
  events: PgEvents;
  temporal: TemporalClientHandle;
  metrics: Metrics;
  /** Syntax-checks agent scripts at create/update; installed by the sandbox module. */
  validateScript?: ScriptValidator;
  /**
   * Set while the process is still starting beyond the API (the dev launcher until its worker runs
   * and `runtime.json` is written): `/readyz` answers 503 with this reason until it is cleared.
   */
  starting?: string;
  /** Run in order at the start of `close()` (e.g. stopping the webhook dispatcher loop). */
  closeHooks?: (() => Promise<void> | void)[];
  close(): Promise<void>;
}

// Postgres bigint (int8) and numeric arrive as strings by default; our int8 values are micro-USD
// and ids that fit in 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export async function createRuntime(config: Config, options: { log?: Logger; metrics?: Metrics } = {}): Promise<Runtime> {
  if (!config.databaseUrl) throw new Error("DATABASE_URL: required (npm start provides an embedded PostgreSQL)");
  if (!config.temporal.address) throw new Error("TEMPORAL_ADDRESS: required (npm start provides a Temporal dev server)");
  const log = options.log ?? createLogger(config.logLevel);
  const orm = await openOrm(config.databaseUrl, config.databasePoolSize);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.databasePoolSize, idleTimeoutMillis: 30_000 });
  pool.on("error", (err) => log.warn({ err }, "idle database connection failed"));
  const events = new PgEvents(config.databaseUrl, pool, log);
  await events.start();
  const temporal = new TemporalClientHandle({ ...config.temporal, address: config.temporal.address });
  const metrics = options.metrics ?? new Metrics();
  const closeHooks: (() => Promise<void> | void)[] = [];
  return {
    config,
    log,
    orm,
    pool,
    events,
    temporal,
    metrics,
    validateScript: scriptValidator(config),
    closeHooks,
    async close() {
      for (const hook of closeHooks.splice(0)) await Promise.resolve(hook()).catch(() => {});
      await events.close();
      await temporal.close().catch(() => {});
      await pool.end().catch(() => {});
      await orm.close(true).catch(() => {});
    },
  };
}
