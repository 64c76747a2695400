import { MikroORM, type Options } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { entities } from "./schema.js";

const here = dirname(fileURLToPath(import.meta.url));
/** Running from source (swc loader) or from `dist/`: migrations are discovered next to this file. */
const fromSource = import.meta.url.endsWith(".ts");

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

export async function openOrm(databaseUrl: string, poolSize = 10): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, poolSize));
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

/** Opens a short-lived connection, applies pending migrations to `databaseUrl`, closes it. */
export async function migrateDatabase(databaseUrl: string): Promise<string[]> {
  const orm = await openOrm(databaseUrl, 1);
  try {
    return await migrate(orm);
  } finally {
    await orm.close(true);
  }
}
