/**
 * What the console makes of an input request's JSON Schema (ctx.ask): a flat object of plain
 * fields becomes a form, anything else a JSON text prefilled with a skeleton. The server checks
 * the answer against the schema either way; nothing here validates, so what the server says is
 * what the user reads.
 */

type Schema = Record<string, unknown>;
export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum";

export interface Field {
  name: string;
  label: string;
  description?: string;
  kind: FieldKind;
  required: boolean;
  options: (string | number | boolean)[];
  initial: string | boolean;
}

const isObject = (v: unknown): v is Schema => !!v && typeof v === "object" && !Array.isArray(v);
const scalar = (v: unknown): v is string | number | boolean => typeof v === "string" || typeof v === "number" || typeof v === "boolean";

function kindOf(s: Schema): FieldKind | undefined {
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every(scalar)) return "enum";
  if (typeof s.type === "string" && ["string", "number", "integer", "boolean"].includes(s.type)) return s.type as FieldKind;
  return undefined;
}

/** The fields of a flat object schema (each property a string, number, integer, boolean or enum); undefined for any other schema. */
export function simpleFields(schema: unknown): Field[] | undefined {
  if (!isObject(schema) || schema.type !== "object" || !isObject(schema.properties)) return undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []);
  const fields: Field[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    if (!isObject(raw)) return undefined;
    const kind = kindOf(raw);
    if (!kind) return undefined;
    const options = kind === "enum" ? (raw.enum as (string | number | boolean)[]) : [];
    const dflt = raw.default;
    const initial = kind === "boolean" ? dflt === true : kind === "enum" ? (scalar(dflt) ? String(options.findIndex((o) => o === dflt)) : "") : scalar(dflt) ? String(dflt) : "";
    fields.push({
      name,
      label: typeof raw.title === "string" && raw.title ? raw.title : name,
      description: typeof raw.description === "string" ? raw.description : undefined,
      kind,
      required: required.has(name),
      options,
      initial: initial === "-1" ? "" : initial,
    });
  }
  return fields.length > 0 ? fields : undefined;
}

/**
 * The answer the form's inputs make: an empty input leaves its property out (so a missing required
 * value is the server's to name); a number that does not parse is sent as typed, for the same reason.
 */
export function valueOfFields(fields: Field[], inputs: Record<string, string | boolean>): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  for (const f of fields) {
    const v = inputs[f.name] ?? f.initial;
    if (f.kind === "boolean") value[f.name] = v === true;
    else if (typeof v !== "string" || v === "") continue;
    else if (f.kind === "enum") value[f.name] = f.options[Number(v)];
    else if (f.kind === "string") value[f.name] = v;
    else value[f.name] = Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return value;
}

/** A starting value for a schema: its default, else the first enum value, else an empty value of its type. */
export function skeleton(schema: unknown, depth = 0): unknown {
  if (!isObject(schema) || depth > 8) return null;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const props = isObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, skeleton(v, depth + 1)]));
    }
    case "array":
      return [];
    case "string":
      return "";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}

/** The JSON text a JSON answer starts from: the schema's skeleton, or an empty string when any value goes. */
export function initialJson(schema: unknown): string {
  return `${JSON.stringify(schema === null || schema === undefined ? "" : skeleton(schema), null, 2)}\n`;
}
