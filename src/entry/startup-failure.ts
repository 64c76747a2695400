/**
 * A standalone process that cannot start (PostgreSQL or Temporal unreachable, a port taken) exits 1
 * with one line that says what failed and what to check — not an uncaught stack trace. Connection
 * strings are never printed: DATABASE_URL may carry a password.
 */
export function startupFailureMessage(command: string, err: unknown): string {
  const e = err as { code?: string; message?: string; address?: string; port?: number };
  const reason = (e?.message ?? String(err)).split("\n")[0]!.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s/@]*@/gi, "://***@");
  const code = typeof e?.code === "string" ? e.code : "";
  const hint =
    code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ETIMEDOUT" || /connect|getaddrinfo/i.test(reason)
      ? " Check that PostgreSQL (DATABASE_URL) and Temporal (TEMPORAL_ADDRESS) are running and reachable."
      : code === "EADDRINUSE"
        ? " Another process holds the port: set PORT (or WORKER_METRICS_PORT) to a free one."
        : "";
  return `${command} could not start: ${reason}${code && !reason.includes(code) ? ` (${code})` : ""}.${hint}\n`;
}

/** Runs a process's start-up; on failure writes the one-line message and exits 1. */
export async function startOrExit<T>(command: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    process.stderr.write(startupFailureMessage(command, err));
    process.exit(1);
  }
}
