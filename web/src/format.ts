/** Formatting shared by pages: durations and byte sizes. */

/** How long a run took, from its start and finish times (null while it has not finished). */
export const runMs = (j: { startedAt?: string | null; finishedAt?: string | null } | null | undefined) =>
  j?.startedAt && j.finishedAt ? new Date(j.finishedAt).getTime() - new Date(j.startedAt).getTime() : null;
export const duration = (ms: number | null | undefined) => (ms == null ? "—" : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);
export const byteLength = (s: string) => new TextEncoder().encode(s).length;
export const fmtBytes = (n: number) => (n < 1024 ? `${n} bytes` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(2)} MB`);
