import type { Runtime } from "./runtime.js";

/** What `perRuntime` returns: the runtime's value, made on first use, or (`peek`) only if made. */
export interface PerRuntime<T> {
  (runtime: Runtime): T;
  peek(runtime: Runtime): T | undefined;
}

/**
 * One value per runtime (an API instance; tests run several in one process), made by `create` on
 * first use and collected with its runtime. `start` runs once it is stored, so what it sets off
 * (a LISTEN, a timer) finds the same value if it asks for it.
 */
export function perRuntime<T>(create: (runtime: Runtime) => T, start?: (value: T, runtime: Runtime) => void): PerRuntime<T> {
  const values = new WeakMap<Runtime, T>();
  const get = (runtime: Runtime): T => {
    if (values.has(runtime)) return values.get(runtime)!;
    const value = create(runtime);
    values.set(runtime, value);
    start?.(value, runtime);
    return value;
  };
  return Object.assign(get, { peek: (runtime: Runtime) => values.get(runtime) });
}
