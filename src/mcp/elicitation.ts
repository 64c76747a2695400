import { AppError } from "../errors/app-error.js";
import type { InputRequestRow } from "../input-requests/store.js";

/**
 * A job's question (ctx.ask) as an MCP form elicitation, and an elicitation's answer as the
 * job's answer, for the Tasks extension's `input_required` and `tasks/update`.
 *
 * A form elicitation's requestedSchema is, by the MCP specification, a flat object of primitive
 * fields (string, number, integer, boolean, a string enum) so that any client can draw a form for
 * it. A ctx.ask schema is any object schema. One that is already flat is offered as it is, and the
 * form's content is the answer. Any other (nested objects, arrays, combinators, or no schema at
 * all) is offered as one text field, `answer`, whose description carries the schema: for a schema
 * the text is parsed as JSON, without one it is the answer as typed. Either way the answer is then
 * checked against the job's own schema, exactly as on the other channels.
 */

const PRIMITIVE = new Set(["string", "number", "integer", "boolean"]);
/** Keywords a form field may carry (MCP's PrimitiveSchemaDefinition); anything else is not flat. */
const FIELD_KEYWORDS = new Set(["type", "title", "description", "default", "enum", "enumNames", "oneOf", "const", "minLength", "maxLength", "format", "minimum", "maximum"]);
const OBJECT_KEYWORDS = new Set(["type", "properties", "required", "title", "description", "additionalProperties", "$schema"]);

type Schema = Record<string, unknown>;

function isFlatField(field: unknown): boolean {
  if (!field || typeof field !== "object" || Array.isArray(field)) return false;
  const f = field as Schema;
  if (typeof f.type !== "string" || !PRIMITIVE.has(f.type)) return false;
  if (Array.isArray(f.oneOf) && !f.oneOf.every((o) => o && typeof o === "object" && "const" in (o as Schema))) return false;
  return Object.keys(f).every((k) => FIELD_KEYWORDS.has(k));
}

/** True when the schema is one a form elicitation may carry as it is. */
export function isFlatFormSchema(schema: unknown): schema is Schema {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return false;
  const s = schema as Schema;
  if (s.type !== "object" || !s.properties || typeof s.properties !== "object") return false;
  if (!Object.keys(s).every((k) => OBJECT_KEYWORDS.has(k))) return false;
  return Object.values(s.properties as Schema).every(isFlatField);
}

function textFieldSchema(schema: unknown): Schema {
  const description = schema
    ? `Your answer as JSON text matching this JSON Schema: ${JSON.stringify(schema)}`
    : "Your answer";
  return { type: "object", properties: { answer: { type: "string", title: "Answer", description } }, required: ["answer"] };
}

/** The question as an input request of the extension (keyed by the input request's id). */
export function elicitationOf(row: Pick<InputRequestRow, "prompt" | "schema">): { method: "elicitation/create"; params: Schema } {
  const requestedSchema = isFlatFormSchema(row.schema) ? row.schema : textFieldSchema(row.schema);
  return { method: "elicitation/create", params: { mode: "form", message: row.prompt, requestedSchema } };
}

/**
 * The job's answer from an ElicitResult. `undefined` when the person declined or cancelled: the
 * question stays open (another channel, or a later update, may still answer it). A malformed
 * result, or JSON text that does not parse, is validation_failed, as an invalid answer is.
 */
export function answerOf(row: Pick<InputRequestRow, "schema">, response: unknown): { value: unknown } | undefined {
  const fail = (why: string) => new AppError("validation_failed", `The answer is not valid: ${why}`, { param: "inputResponses" });
  if (!response || typeof response !== "object" || Array.isArray(response)) throw fail("an input response must be an elicitation result ({ action, content })");
  const r = response as { action?: unknown; content?: unknown };
  if (r.action === "decline" || r.action === "cancel") return undefined;
  if (r.action !== "accept") throw fail('action must be "accept", "decline" or "cancel"');
  if (!r.content || typeof r.content !== "object" || Array.isArray(r.content)) throw fail("an accepted elicitation needs its form's content");
  if (isFlatFormSchema(row.schema)) return { value: r.content };
  const text = (r.content as { answer?: unknown }).answer;
  if (typeof text !== "string") throw fail("the form's `answer` field must be text");
  if (!row.schema) return { value: text };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    throw fail("the `answer` field must be JSON text matching the question's schema");
  }
}
