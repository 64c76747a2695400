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
  // Longest first, so a secret that contains another is removed whole.
  const raw = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  const escaped = raw.map((s) => JSON.stringify(s).slice(1, -1));
  const replaceAll = (text: string, needles: string[]) => needles.reduce((t, n) => t.split(n).join(REDACTED), text);
  return {
    text: (value) => (raw.length ? replaceAll(value, raw) : value),
    json<T>(value: T): T {
      if (!raw.length || value === undefined) return value;
      // In JSON text a secret can only appear in its escaped form inside a string.
      const text = replaceAll(JSON.stringify(value), escaped);
      try {
        return JSON.parse(text) as T;
      } catch {
        return REDACTED as T;
      }
    },
  };
}
