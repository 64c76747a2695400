import type { MikroORM } from "@mikro-orm/postgresql";
import type pg from "pg";
import type { Config } from "../config/config.js";
import type { Statement } from "../db/statement.js";
import { openDatabase } from "../db/orm.js";
import { createLogger, type Logger } from "../infra/logger.js";
import { Metrics } from "../infra/metrics.js";
import { PgEvents } from "../infra/pg-events.js";
import { TemporalClientHandle } from "./temporal-client.js";
import { scriptValidator } from "../sandbox/index.js";
import { startTracing, type Tracing } from "../telemetry/tracing.js";

/**
 * What every process shares: configuration, logger, database (MikroORM and the one `pg` pool it
 * runs on, which hand-written hot-path SQL uses too), cross-instance events and a Temporal client.
 */
/** Syntax-checks an agent script; throws AppError validation_failed. */
export type ScriptValidator = (source: string) => Promise<void>;

export interface Runtime {
  config: Config;
  log: Logger;
  orm: MikroORM;
  /** The ORM's own pool (src/db/orm.ts): one pool per process. */
  pool: pg.Pool;
  events: PgEvents;
  temporal: TemporalClientHandle;
  metrics: Metrics;
  /** OpenTelemetry, when the OTEL_* variables turn it on; undefined otherwise (nothing loaded). */
  tracing?: Tracing;
  /** Syntax-checks agent scripts at create/update; installed by the sandbox module. */
  validateScript?: ScriptValidator;
  /**
   * Set while the process is still starting beyond the API (the dev launcher until its worker runs
   * and `runtime.json` is written): `/readyz` answers 503 with this reason until it is cleared.
   */
  starting?: string;
  /**
   * The statements of the reclaim of dead chat turns (threads/store.ts `reclaimStatements`) when a
   * capability above `threads` ends its own records with them; installed by the composition root
   * (the A2A ones end the turns' tasks), so every reclaim (the periodic one, a new turn on the
   * thread, a run's next attempt) does. Unset: the plain reclaim.
   */
  turnReclaim?: Readonly<Record<"expired" | "thread" | "turn", Statement>>;
  /** Run in order at the start of `close()` (e.g. stopping the webhook dispatcher loop). */
  closeHooks?: (() => Promise<void> | void)[];
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log?: Logger;
  metrics?: Metrics;
  /**
   * Which process this is (`api`, `worker`, `dev`, …): the database connections carry it as
   * `application_name` (`agw-<role>`, the LISTEN connection `agw-<role>-listen`).
   */
  role?: string;
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  if (!config.databaseUrl) throw new Error("DATABASE_URL: required (npm start provides an embedded PostgreSQL)");
  if (!config.temporal.address) throw new Error("TEMPORAL_ADDRESS: required (npm start provides a Temporal dev server)");
  const log = options.log ?? createLogger(config.logLevel);
  // Before anything opens HTTP servers or clients, so they are traced from the start.
  const tracing = await startTracing(config);
  const applicationName = `agw-${options.role ?? "process"}`;
  const { orm, pool } = await openDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    applicationName,
    onPoolError: (err) => log.warn({ err }, "idle database connection failed"),
  });
  const events = new PgEvents(config.databaseUrl, pool, log, `${applicationName}-listen`);
  await events.start();
  const temporal = new TemporalClientHandle({ ...config.temporal, address: config.temporal.address }, tracing ? [tracing.temporalPlugin] : []);
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
    tracing,
    validateScript: scriptValidator(config),
    closeHooks,
    async close() {
      for (const hook of closeHooks.splice(0)) await Promise.resolve(hook()).catch(() => {});
      await events.close();
      await temporal.close().catch(() => {});
      await orm.close(true).catch(() => {}); // ends the pool
      await tracing?.flush().catch(() => {});
    },
  };
}
