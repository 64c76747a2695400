import { UnderscoreNamingStrategy, type InferEntity } from "@mikro-orm/core";

/**
 * Table and column names for hand-written SQL, derived from the entities in `schema.ts` with the
 * naming strategy MikroORM uses for the migrations, so a renamed property cannot leave a
 * statement behind silently (src/db/names.test.ts checks them against the migrated database).
 */

interface EntityMeta {
  meta: { tableName?: string; properties: Record<string, { kind?: string }> };
}

export type SqlNames<S> = { readonly table: string } & { readonly [K in keyof InferEntity<S> & string]: string };

const naming = new UnderscoreNamingStrategy();

export function sqlNames<S extends EntityMeta>(entity: S): SqlNames<S> {
  const { tableName, properties } = entity.meta;
  if (!tableName) throw new Error("sqlNames: the entity has no tableName");
  const names: Record<string, string> = { table: tableName };
  for (const [prop, def] of Object.entries(properties)) {
    // Many-to-one properties are stored as `<prop>_id`.
    names[prop] = def.kind === "m:1" ? naming.joinKeyColumnName(prop) : naming.propertyToColumnName(prop);
  }
  return names as SqlNames<S>;
}
