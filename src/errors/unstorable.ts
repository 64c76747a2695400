import { AppError } from "./app-error.js";

/**
 * Text PostgreSQL cannot store is the client's input, not a bug: a NUL character (U+0000) in any
 * string that reaches a text or jsonb column or parameter makes the statement fail with SQLSTATE
 * 22021 (or 22P05 for a jsonb \u0000 escape), and an unpaired UTF-16 surrogate escaped into jsonb
 * with 22P02 ("Unicode low surrogate must follow a high surrogate"). Mapped once here to 400.
 */
const PG_CODES = new Set(["22021", "22P05"]);

function isUnstorable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const e = err as { code?: unknown; message?: unknown; detail?: unknown; cause?: unknown };
  if (typeof e.code === "string" && PG_CODES.has(e.code)) return true;
  if (e.code === "22P02" && typeof e.detail === "string" && /surrogate/i.test(e.detail)) return true;
  if (typeof e.message === "string" && /invalid byte sequence for encoding "UTF8": 0x00|unsupported Unicode escape sequence/.test(e.message)) return true;
  return isUnstorable(e.cause, depth + 1);
}

/** The 400 for an error caused by text PostgreSQL refuses; undefined for anything else. */
export function unstorableTextError(err: unknown): AppError | undefined {
  if (!isUnstorable(err)) return undefined;
  return new AppError("invalid_request_error", "Text may not contain NUL (\\u0000) characters or unpaired UTF-16 surrogates", { cause: err });
}
