import { AppError } from "../errors/app-error.js";
import { isStorableText } from "../infra/text.js";
import { MAX_JSON_DEPTH, valueTooDeep } from "../infra/json.js";
import type { ContentPart, ResponseFormat, ToolChoice, ToolSpec } from "../providers/types.js";

/** Field parsers shared by the chat-completions and the responses request. */

export const bad = (param: string, message: string) => new AppError("invalid_request_error", message, { param });
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const given = (v: unknown) => v !== undefined && v !== null;

export function number(body: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = body[name];
  if (!given(v)) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) throw bad(name, `${name} must be a number from ${min} to ${max}`);
  return v;
}

export function positiveInt(body: Record<string, unknown>, name: string): number | undefined {
  const v = body[name];
  if (!given(v)) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1_000_000) throw bad(name, `${name} must be a whole number from 1 to 1000000`);
  return v;
}

export function bool(body: Record<string, unknown>, name: string): boolean | undefined {
  const v = body[name];
  if (!given(v)) return undefined;
  if (typeof v !== "boolean") throw bad(name, `${name} must be a boolean`);
  return v;
}

export function optionalString(body: Record<string, unknown>, name: string, max = 512): string | undefined {
  const v = body[name];
  if (!given(v)) return undefined;
  if (typeof v !== "string" || v.length > max) throw bad(name, `${name} must be a string of at most ${max} characters`);
  return v;
}

/**
 * Refuses a request any of whose strings (object keys too) PostgreSQL could not store: a NUL or an
 * unpaired surrogate (infra/text.ts). Checked on the whole body before anything else, so such a
 * request never reaches the hold or the upstream call, whichever field carries the text; `param`
 * names that field (`messages[1].tool_calls[0].function.arguments`). Iterative: bodies may nest deep.
 */
export function checkStorable(body: Record<string, unknown>): void {
  type Node = { value: unknown; parent?: Node; key?: string | number };
  const pathOf = (n: Node): string => {
    const keys: (string | number)[] = [];
    for (let at: Node | undefined = n; at?.key !== undefined; at = at.parent) keys.push(at.key);
    return keys.reverse().reduce<string>((p, k) => (typeof k === "number" ? `${p}[${k}]` : p ? `${p}.${k}` : k), "");
  };
  const refused = (n: Node, what: string) => bad(pathOf(n) || "body", `${pathOf(n) || "The body"} ${what} that cannot be stored (NUL, \\u0000, or an unpaired UTF-16 surrogate)`);
  const stack: Node[] = [{ value: body }];
  while (stack.length) {
    const n = stack.pop()!;
    const v = n.value;
    if (typeof v === "string") {
      if (!isStorableText(v)) throw refused(n, "contains a character");
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: n, key: i });
    } else if (isObject(v)) {
      const keys = Object.keys(v);
      for (const k of keys) if (!isStorableText(k)) throw refused(n, "has a key with a character");
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: v[keys[i]!], parent: n, key: keys[i]! });
    }
  }
}

/** Refuses a field the gateway cannot honour, unless it is absent or has its neutral value. */
export function refuse(body: Record<string, unknown>, name: string, neutral: (v: unknown) => boolean, why: string): void {
  const v = body[name];
  if (given(v) && !neutral(v)) throw bad(name, `${name} is not supported: ${why}`);
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A free-form JSON Schema (tool parameters, structured output) nested deeper than any real one:
 * refused here, counted like any bad request, before serializing it would overflow the stack.
 */
function checkSchemaDepth(schema: unknown, param: string): void {
  if (valueTooDeep(schema)) throw bad(param, `${param} nests deeper than ${MAX_JSON_DEPTH} levels`);
}

/** OpenAI function tools. Chat completions nest the function (`{type, function: {…}}`); responses do not (`{type, name, …}`). */
export function parseTools(v: unknown, param: string, nested: boolean): ToolSpec[] | undefined {
  if (!given(v)) return undefined;
  if (!Array.isArray(v)) throw bad(param, `${param} must be an array of function tools`);
  if (v.length > 128) throw bad(param, `${param} may hold at most 128 tools`);
  const names = new Set<string>();
  return v.map((t, i) => {
    const p = `${param}[${i}]`;
    if (!isObject(t) || t.type !== "function") throw bad(`${p}.type`, `${p}: only function tools ({"type":"function",…}) are supported`);
    const f = nested ? t.function : t;
    if (!isObject(f)) throw bad(`${p}.function`, `${p}.function must be an object with a name`);
    const fp = nested ? `${p}.function` : p;
    if (typeof f.name !== "string" || !TOOL_NAME.test(f.name)) throw bad(`${fp}.name`, `${fp}.name must be 1-64 letters, digits, _ or -`);
    if (names.has(f.name)) throw bad(`${fp}.name`, `${fp}.name: two tools are named ${f.name}`);
    names.add(f.name);
    if (given(f.description) && typeof f.description !== "string") throw bad(`${fp}.description`, `${fp}.description must be a string`);
    if (given(f.parameters) && !isObject(f.parameters)) throw bad(`${fp}.parameters`, `${fp}.parameters must be a JSON Schema object`);
    checkSchemaDepth(f.parameters, `${fp}.parameters`);
    if (given(f.strict) && typeof f.strict !== "boolean") throw bad(`${fp}.strict`, `${fp}.strict must be a boolean`);
    return {
      name: f.name,
      ...(typeof f.description === "string" && f.description ? { description: f.description } : {}),
      ...(isObject(f.parameters) ? { parameters: f.parameters } : {}),
      ...(f.strict === true ? { strict: true } : {}),
    };
  });
}

export function parseToolChoice(v: unknown, tools: ToolSpec[] | undefined, nested: boolean): ToolChoice | undefined {
  if (!given(v)) return undefined;
  if (v === "auto" || v === "none" || v === "required") {
    if (v === "required" && !tools?.length) throw bad("tool_choice", "tool_choice required needs tools");
    return v;
  }
  const name = isObject(v) && v.type === "function" ? (nested ? (isObject(v.function) ? v.function.name : undefined) : v.name) : undefined;
  if (typeof name !== "string") throw bad("tool_choice", 'tool_choice must be "auto", "none", "required" or {"type":"function",…} naming a tool');
  if (!tools?.some((t) => t.name === name)) throw bad("tool_choice", `tool_choice names ${name}, which is not in tools`);
  return { name };
}

/** `response_format` (chat) / `text.format` (responses): json_schema is nested in chat, flat in responses. */
export function parseResponseFormat(v: unknown, param: string, nested: boolean): ResponseFormat | undefined {
  if (!given(v)) return undefined;
  if (!isObject(v)) throw bad(param, `${param} must be an object`);
  if (v.type === "text") return { type: "text" };
  if (v.type === "json_object") return { type: "json_object" };
  if (v.type !== "json_schema") throw bad(`${param}.type`, `${param}.type must be text, json_object or json_schema`);
  const s = nested ? v.json_schema : v;
  const sp = nested ? `${param}.json_schema` : param;
  if (!isObject(s)) throw bad(sp, `${sp} must be an object with name and schema`);
  if (typeof s.name !== "string" || !TOOL_NAME.test(s.name)) throw bad(`${sp}.name`, `${sp}.name must be 1-64 letters, digits, _ or -`);
  if (!isObject(s.schema)) throw bad(`${sp}.schema`, `${sp}.schema must be a JSON Schema object`);
  checkSchemaDepth(s.schema, `${sp}.schema`);
  if (given(s.strict) && typeof s.strict !== "boolean") throw bad(`${sp}.strict`, `${sp}.strict must be a boolean`);
  return { type: "json_schema", name: s.name, schema: s.schema, strict: s.strict === true };
}

/** Content: a string or parts. `textTypes` are the text part types (chat: text; responses: input_text, output_text). */
export function parseContent(
  v: unknown,
  param: string,
  opts: { textTypes: string[]; imageType?: string; imageUrl: (part: Record<string, unknown>) => unknown },
): { text: string; parts?: ContentPart[] } {
  if (typeof v === "string") return { text: v };
  if (!Array.isArray(v)) throw bad(param, `${param} must be a string or an array of content parts`);
  const parts: ContentPart[] = [];
  v.forEach((part, j) => {
    const p = `${param}[${j}]`;
    if (!isObject(part)) throw bad(p, `${p} must be a content part object`);
    if (opts.textTypes.includes(part.type as string)) {
      if (typeof part.text !== "string") throw bad(`${p}.text`, `${p}.text must be a string`);
      parts.push({ type: "text", text: part.text });
    } else if (opts.imageType && part.type === opts.imageType) {
      const url = opts.imageUrl(part);
      if (typeof url !== "string" || url.length === 0) throw bad(`${p}.image_url.url`, `${p}: the image needs a URL (a data URL or http(s))`);
      parts.push({ type: "image", url });
    } else {
      throw bad(`${p}.type`, `${p}.type ${JSON.stringify(part.type)} is not supported (${[...opts.textTypes, ...(opts.imageType ? [opts.imageType] : [])].join(", ")})`);
    }
  });
  const text = parts.map((p) => (p.type === "text" ? p.text : "")).join("");
  return parts.some((p) => p.type === "image") ? { text, parts } : { text };
}
