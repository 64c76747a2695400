import "reflect-metadata";
import { openDatabase, migrate } from "../db/orm.js";

/** `npm run migrate`: applies pending migrations to DATABASE_URL. */
const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write("DATABASE_URL: required for npm run migrate (npm start migrates its embedded database itself)\n");
  process.exit(1);
}
const { orm } = await openDatabase(url, { poolSize: 2 });
try {
  const applied = await migrate(orm);
  process.stdout.write(applied.length ? `Applied ${applied.length} migration(s):\n${applied.map((n) => `  ${n}`).join("\n")}\n` : "Database is up to date.\n");
} catch (err) {
  process.stderr.write(`Migration failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await orm.close(true);
}
