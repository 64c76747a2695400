/**
 * Runs `stop` once on the first SIGINT/SIGTERM; a second signal exits at once. Returns a trigger
 * that starts the same shutdown from code (e.g. when a child process crashed).
 */
export function onShutdown(stop: (reason: string) => Promise<void>, log: (msg: string) => void): (reason: string, exitCode?: number) => void {
  let stopping = false;
  const run = (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log(`shutting down (${reason})`);
    stop(reason)
      .then(() => process.exit(exitCode))
      .catch((err) => {
        log(`shutdown failed: ${(err as Error).message}`);
        process.exit(1);
      });
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) {
        log(`${signal} again: exiting now`);
        process.exit(130);
      }
      run(signal);
    });
  }
  return run;
}

/**
 * For launchers: an error that escapes every promise (a dying database makes pg clients throw
 * from places no request awaits) runs the ordered shutdown with exit code 1 instead of crashing
 * with children left behind.
 */
export function shutdownOnUnexpectedErrors(run: (reason: string, exitCode?: number) => void, log: (msg: string) => void): void {
  process.on("uncaughtException", (err) => {
    log(`unexpected error: ${err.message}`);
    run("unexpected error", 1);
  });
  process.on("unhandledRejection", (reason) => {
    log(`unhandled rejection: ${(reason as Error)?.message ?? String(reason)}`);
    run("unhandled rejection", 1);
  });
}
