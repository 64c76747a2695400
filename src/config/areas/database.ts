import { z } from "zod";
import { area, variable } from "../variable.js";
import { url } from "../values.js";

/** The configuration variables of the area "Database". */
export const databaseArea = area("Database", "PostgreSQL: which one, the pool, the retention purge.", {
  DATABASE_URL: variable(url(["postgres:", "postgresql:"]).optional(), "PostgreSQL to use instead of the embedded one", "embedded PostgreSQL"),
  DATABASE_POOL_SIZE: variable(z.coerce.number().int().min(1).max(200).default(10), "Connections per process: one pool shared by the ORM and the hand-written SQL (plus one LISTEN connection); `application_name` `agw-<role>`"),
  RETENTION_BATCH_SIZE: variable(z.coerce.number().int().min(1).max(100_000).default(1000), "Audit entries (or idempotency records) the retention purge handles in one transaction; a request on a purged row waits at most for one batch (docs/operations/backups.md)"),
  RETENTION_BATCH_TIMEOUT_SECONDS: variable(z.coerce.number().min(1).max(86_400).default(300), "PostgreSQL cancels a retention batch that runs longer (statement_timeout): the attempt fails, the workflow retries it, and the run goes on where it stopped; after the last attempt the run shows `failed` with why"),
});
