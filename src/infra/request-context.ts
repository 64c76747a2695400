import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The request a piece of work belongs to, carried implicitly across awaits (AsyncLocalStorage),
 * so the logger can stamp every line of a request with its id without the id being passed
 * through every module.
 */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
