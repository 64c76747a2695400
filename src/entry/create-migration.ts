import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, migrate } from "../db/orm.js";
import { startEmbeddedPostgres } from "../dev/embedded-postgres.js";

/**
 * `npm run migration:create [-- name]`: diffs the entities in src/db/schema.ts against the schema
 * the existing migrations build, on a scratch embedded PostgreSQL, and writes the difference as a
 * new migration in src/db/migrations.
 */
const name = process.argv[2];
const dir = mkdtempSync(join(tmpdir(), "agw-migration-"));
const server = await startEmbeddedPostgres(join(dir, "pg"));
try {
  await server.ensureDatabase("scratch");
  const { orm } = await openDatabase(server.urlFor("scratch"), { poolSize: 2 });
  try {
    await migrate(orm);
    const result = await orm.migrator.create(undefined, false, false, name);
    process.stdout.write(result.diff.up.length ? `Created ${result.fileName}\n` : "No changes: the migrations already match the entities.\n");
  } finally {
    await orm.close(true);
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
