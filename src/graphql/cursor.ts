import { AppError } from "../errors/app-error.js";

/**
 * Opaque keyset cursors (base64url JSON of a row's sort key), for GraphQL connections and the
 * A2A ListTasks page token. No decorators here: REST modules import it without type-graphql.
 */

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** Decodes a cursor into a sort key of the expected shape (types per position), else BAD_USER_INPUT. */
export function decodeCursor<T extends readonly ("string" | "number")[]>(
  after: string | null | undefined,
  shape: T,
): { [K in keyof T]: T[K] extends "string" ? string : number } | undefined {
  if (after == null) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(after, "base64url").toString("utf8"));
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== shape.length || !key.every((v, i) => typeof v === shape[i] && (typeof v !== "number" || Number.isSafeInteger(v)))) {
    throw new AppError("validation_failed", "after is not a cursor from this list", { param: "after" });
  }
  return key as never;
}
