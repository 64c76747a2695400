import { join } from "node:path";
import pg from "pg";
import { startTemporalDevServer } from "../../src/dev/temporal-dev-server.js";
import { migrateWithDist } from "./gateway.js";
import { startDurablePostgres } from "./postgres.js";

/**
 * What the webhook benches run against, under `dir`: a PostgreSQL with durable settings holding the
 * migrated database "wh" (migrated by the build in `root`), a Temporal dev server, and a small pool
 * on "wh" for the bench's own queries. The caller stops `temporal` and `pgServer`; if this fails
 * half-way, it stops them itself.
 */
export async function startRunBackends(root: string, dir: string) {
  const [pgServer, temporal] = await Promise.all([
    startDurablePostgres(join(dir, "pg")),
    startTemporalDevServer({ dataDir: join(dir, "temporal"), cliPath: process.env.TEMPORAL_CLI_PATH || undefined, namespace: "default", ui: false }),
  ]);
  try {
    await pgServer.createDatabase("wh");
    const databaseUrl = pgServer.url("wh");
    migrateWithDist(root, databaseUrl);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    pool.on("error", () => {}); // the server stopping under an idle client is not an error here
    return { pgServer, temporal, databaseUrl, pool };
  } catch (err) {
    await temporal.stop().catch(() => {});
    await pgServer.stop().catch(() => {});
    throw err;
  }
}
