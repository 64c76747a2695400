/**
 * Text PostgreSQL cannot store: NUL (U+0000), which text and jsonb both refuse (22021, 22P05), and
 * unpaired UTF-16 surrogates, which jsonb refuses (22P02) and a text column silently turns into
 * U+FFFD. The chat request refuses such text before its hold; what an upstream or a script hands
 * back is made storable with `storableText`, so what is stored and what is returned are the same.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

export const isStorableText = (s: string): boolean => !UNSTORABLE.test(s);

/** True when a JSON value holds no text PostgreSQL's jsonb refuses (NUL, unpaired surrogates), keys included. */
export function isStorableValue(v: unknown): boolean {
  if (typeof v === "string") return isStorableText(v);
  if (Array.isArray(v)) return v.every(isStorableValue);
  if (v && typeof v === "object") return Object.entries(v).every(([k, x]) => isStorableText(k) && isStorableValue(x));
  return true;
}

/** `s` with each NUL and unpaired surrogate replaced by U+FFFD (the replacement character). */
export const storableText = (s: string): string => (UNSTORABLE.test(s) ? s.replace(UNSTORABLE_ALL, "\uFFFD") : s);
