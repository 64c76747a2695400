import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../src/dev/embedded-postgres.js";
import { startTemporalDevServer } from "../src/dev/temporal-dev-server.js";
import { migrateDatabase } from "../src/db/orm.js";

/**
 * One embedded PostgreSQL and one Temporal dev server for the whole run. A migrated template
 * database lets each test file clone a fresh database in milliseconds (test/helpers/db.ts).
 */
export const TEMPLATE_DB = "agw_template";

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgPort: number;
    temporalAddress: string;
    templateDb: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "agw-test-"));
  const say = (m: string) => process.stderr.write(`[test setup] ${m}\n`);
  say(`starting PostgreSQL and the Temporal dev server in ${dir}`);
  const [pg, temporal] = await Promise.all([
    startEmbeddedPostgres(join(dir, "pg")),
    startTemporalDevServer({ dataDir: join(dir, "temporal"), cliPath: process.env.TEMPORAL_CLI_PATH || undefined, namespace: "default", ui: false }),
  ]);
  await pg.ensureDatabase(TEMPLATE_DB);
  await migrateDatabase(pg.urlFor(TEMPLATE_DB));
  say(`PostgreSQL on ${pg.port}, Temporal on ${temporal.address}`);

  project.provide("pgAdminUrl", pg.adminUrl);
  project.provide("pgPort", pg.port);
  project.provide("temporalAddress", temporal.address);
  project.provide("templateDb", TEMPLATE_DB);

  return async () => {
    await temporal.stop().catch(() => {});
    await pg.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
}
