import type { z } from "zod";

/**
 * One configuration variable: its schema (which validates it and gives its default) and what the
 * reference says of it. docs/reference/configuration.md is generated from these
 * (`npm run docs:write`), so the documentation of a variable lives beside its validation.
 */
export interface Variable<S extends z.ZodType = z.ZodType> {
  schema: S;
  /** One paragraph of Markdown: what it does, its unit, when to change it. */
  description: string;
  /** The default as the reference shows it, when the schema has none of its own (derived, dev vs production). */
  shownDefault?: string;
}

export const variable = <S extends z.ZodType>(schema: S, description: string, shownDefault?: string): Variable<S> => ({ schema, description, shownDefault });

/** The variables of one area of the configuration (one file of src/config/areas/), in reference order. */
export interface Area<V extends Record<string, Variable> = Record<string, Variable>> {
  title: string;
  intro: string;
  variables: V;
}

export const area = <V extends Record<string, Variable>>(title: string, intro: string, variables: V): Area<V> => ({ title, intro, variables });

/** The zod shape of an area's variables. */
export function shapeOf<V extends Record<string, Variable>>(a: Area<V>): { [K in keyof V]: V[K]["schema"] } {
  return Object.fromEntries(Object.entries(a.variables).map(([name, v]) => [name, v.schema])) as { [K in keyof V]: V[K]["schema"] };
}

/** The schema's own default (before its transforms), or undefined when it has none. */
export function schemaDefault(schema: z.ZodType): unknown {
  const def = (schema as unknown as { _zod: { def: { type: string; defaultValue?: unknown; in?: z.ZodType } } })._zod.def;
  if (def.type === "default") return def.defaultValue;
  if (def.type === "pipe" && def.in) return schemaDefault(def.in);
  return undefined;
}
