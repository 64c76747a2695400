import { Ajv, type ValidateFunction } from "ajv";
import { AppError } from "../errors/app-error.js";
import { isStorableText, isStorableValue } from "../infra/text.js";
import { valueTooDeep } from "../infra/json.js";
import { HostCallError } from "../sandbox/index.js";

/** ctx.ask's limits (docs/design/input-requests.md): the timeout's default and maximum, the prompt's and schema's size. */
export const DEFAULT_TIMEOUT_SECONDS = 24 * 3600;
export const MAX_TIMEOUT_SECONDS = 30 * 24 * 3600;
export const MAX_PROMPT_CHARS = 4000;
export const MAX_SCHEMA_BYTES = 16 * 1024;
export const MAX_SCHEMA_DEPTH = 32;
/** An answer's JSON: at most this many bytes and MAX_ANSWER_DEPTH levels. */
export const MAX_ANSWER_BYTES = 64 * 1024;
export const MAX_ANSWER_DEPTH = 32;
/**
 * Keywords refused in a schema: a regular expression the script chose would run in the API process
 * on whatever an answerer sends (catastrophic backtracking); `$ref`/`$dynamicRef` to anything but
 * the schema itself could make Ajv fetch or fail at answer time.
 */
const REFUSED_KEYWORDS = new Set(["pattern", "patternProperties", "$dynamicRef", "$recursiveRef"]);

// One validator for the process; `allErrors` off: the first failure is what the answerer reads.
const ajv = new Ajv({ strict: false, validateFormats: false, allowUnionTypes: true, code: { optimize: false } });
/** Compiled schemas by their JSON, a bounded cache (oldest dropped first). */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;

function refusedKeyword(v: unknown): string | undefined {
  if (Array.isArray(v)) {
    for (const x of v) {
      const k = refusedKeyword(x);
      if (k) return k;
    }
  } else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (REFUSED_KEYWORDS.has(k)) return k;
      if (k === "$ref" && typeof x === "string" && !x.startsWith("#")) return "$ref (only local references, #/…)";
      const inner = refusedKeyword(x);
      if (inner) return inner;
    }
  }
  return undefined;
}

function validatorOf(json: string): ValidateFunction {
  let fn = compiled.get(json);
  if (!fn) {
    fn = ajv.compile(JSON.parse(json) as object);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(json, fn);
  }
  return fn;
}

export interface AskArgs {
  prompt: string;
  schema: object | null;
  timeoutSeconds: number;
}

/** ctx.ask's arguments, checked: anything wrong throws in the script (a HostCallError it may catch). */
export function parseAskArgs(raw: unknown): AskArgs {
  const bad = (why: string) => new HostCallError(`ctx.ask({ prompt, schema?, timeoutSeconds? }): ${why}`);
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw bad("needs an object");
  const a = raw as { prompt?: unknown; schema?: unknown; timeoutSeconds?: unknown };
  if (typeof a.prompt !== "string" || a.prompt.trim() === "") throw bad("prompt must be a non-empty string");
  if (a.prompt.length > MAX_PROMPT_CHARS) throw bad(`prompt is longer than ${MAX_PROMPT_CHARS} characters`);
  if (!isStorableText(a.prompt)) throw bad("prompt holds a NUL character or an unpaired surrogate");
  let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
  if (a.timeoutSeconds !== undefined && a.timeoutSeconds !== null) {
    if (typeof a.timeoutSeconds !== "number" || !Number.isFinite(a.timeoutSeconds) || a.timeoutSeconds < 1 || a.timeoutSeconds > MAX_TIMEOUT_SECONDS) {
      throw bad(`timeoutSeconds must be a number from 1 to ${MAX_TIMEOUT_SECONDS} (30 days)`);
    }
    timeoutSeconds = a.timeoutSeconds;
  }
  let schema: object | null = null;
  if (a.schema !== undefined && a.schema !== null) {
    if (typeof a.schema !== "object" || Array.isArray(a.schema)) throw bad("schema must be a JSON Schema object");
    if ((a.schema as { type?: unknown }).type !== "object") throw bad('schema must describe an object ({ type: "object", properties: … })');
    const json = JSON.stringify(a.schema);
    if (Buffer.byteLength(json) > MAX_SCHEMA_BYTES) throw bad(`schema is larger than ${MAX_SCHEMA_BYTES} bytes`);
    if (valueTooDeep(a.schema, MAX_SCHEMA_DEPTH)) throw bad(`schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    if (!isStorableText(json)) throw bad("schema holds a NUL character or an unpaired surrogate");
    const refused = refusedKeyword(a.schema);
    if (refused) throw bad(`schema keyword ${refused} is not supported`);
    try {
      validatorOf(json);
    } catch (err) {
      throw bad(`schema is not a valid JSON Schema: ${(err as Error).message.slice(0, 300)}`);
    }
    schema = a.schema;
  }
  return { prompt: a.prompt, schema, timeoutSeconds };
}


/**
 * Checks an answer before it is recorded: size, depth, storable text, then the request's schema
 * (Ajv). Throws validation_failed (400, GraphQL BAD_USER_INPUT) naming what failed.
 */
export function checkAnswer(schema: unknown, value: unknown): void {
  const fail = (why: string) => new AppError("validation_failed", `The answer is not valid: ${why}`, { param: "value" });
  if (value === undefined) throw fail("no value");
  if (valueTooDeep(value, MAX_ANSWER_DEPTH)) throw fail(`it nests deeper than ${MAX_ANSWER_DEPTH} levels`);
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json) > MAX_ANSWER_BYTES) throw fail(`it is larger than ${MAX_ANSWER_BYTES} bytes`);
  if (!isStorableValue(value)) throw fail("it holds a NUL character or an unpaired surrogate");
  if (schema === null || schema === undefined) return;
  const validate = validatorOf(JSON.stringify(schema));
  if (validate(value)) return;
  const e = validate.errors?.[0];
  const where = e?.instancePath ? `${e.instancePath} ` : "the value ";
  throw fail(`${where}${e?.message ?? "does not match the schema"}${e?.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`);
}
