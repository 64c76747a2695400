/**
 * Secret values never leave a run in anything the service writes (logs, results, errors, audit,
 * journal, thread messages): every such text passes through the run's redactor first.
 */
export const REDACTED = "[redacted]";

export interface Redactor {
  text(value: string): string;
  /** A JSON value with every secret removed from every string in it. */
  json<T>(value: T): T;
}

export function createRedactor(secrets: string[]): Redactor {
  const escape = (s: string) => JSON.stringify(s).slice(1, -1);
  // A secret as it is, JSON-escaped once (a log line that printed an object) and twice (that
  // line inside stored JSON); longest first, so a secret that contains another goes whole.
  const raw = [...new Set(secrets.filter((s) => s.length > 0))];
  const needles = [...new Set(raw.flatMap((s) => [s, escape(s), escape(escape(s))]))].sort((a, b) => b.length - a.length);
  const replaceAll = (text: string) => needles.reduce((t, n) => t.split(n).join(REDACTED), text);
  return {
    text: (value) => (raw.length ? replaceAll(value) : value),
    json<T>(value: T): T {
      if (!raw.length || value === undefined) return value;
      const text = replaceAll(JSON.stringify(value));
      try {
        return JSON.parse(text) as T;
      } catch {
        return REDACTED as T;
      }
    },
  };
}
