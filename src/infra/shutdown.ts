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
