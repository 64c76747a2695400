import type { Config } from "../config/config.js";
import { AppError } from "../errors/app-error.js";
import { SandboxPool, ScriptError } from "./pool.js";

export { SandboxPool, ScriptError, HostCallError, type RunOptions, type SandboxLimits, type HostCall } from "./pool.js";

/** One pool per process: threads are created on first use and never keep the process alive. */
let shared: SandboxPool | undefined;

export function sandboxPool(config: Pick<Config, "sandbox">): SandboxPool {
  shared ??= new SandboxPool(config.sandbox.poolSize, config.sandbox.threadIdleMs, config.sandbox.threadMaxRuns);
  return shared;
}

/** The shared pool's occupancy, without creating it. */
export function sandboxPoolStats(): ReturnType<SandboxPool["stats"]> | undefined {
  return shared?.stats();
}

/** The `runtime.validateScript` hook: a syntax error becomes a validation error naming line and column. */
export function scriptValidator(config: Pick<Config, "sandbox">) {
  return async (source: string): Promise<void> => {
    const bytes = Buffer.byteLength(source, "utf8");
    if (bytes > config.sandbox.maxScriptBytes) {
      throw new AppError("validation_failed", `script: ${bytes} bytes is over the limit of ${config.sandbox.maxScriptBytes} bytes (SCRIPT_MAX_BYTES)`, { param: "script" });
    }
    try {
      await sandboxPool(config).validate(source);
    } catch (err) {
      if (err instanceof ScriptError) throw new AppError("validation_failed", `script: ${err.message}`, { param: "script" });
      throw err;
    }
  };
}
