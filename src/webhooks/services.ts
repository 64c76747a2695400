import type { Runtime } from "../runtime/runtime.js";
import { Dispatcher } from "../jobs/dispatcher.js";
import { TRIGGER_CHANGED } from "../triggers/service.js";
import { IngestBatcher } from "./ingest.js";
import { TriggerCache } from "./trigger-cache.js";

/** The per-process webhook machinery of one runtime: trigger cache, group commit, dispatcher. */
export interface WebhookServices {
  cache: TriggerCache;
  batcher: IngestBatcher;
  dispatcher: Dispatcher;
}

const byRuntime = new WeakMap<Runtime, WebhookServices>();

export function webhookServices(runtime: Runtime): WebhookServices {
  let s = byRuntime.get(runtime);
  if (s) return s;
  const cache = new TriggerCache(runtime);
  const dispatcher = new Dispatcher(runtime);
  const batcher = new IngestBatcher(runtime.pool, (ids, traces) => dispatcher.enqueue(ids, traces));
  s = { cache, batcher, dispatcher };
  byRuntime.set(runtime, s);
  void runtime.events.subscribe(TRIGGER_CHANGED, (id) => cache.invalidate(id)).catch((err) => runtime.log.warn({ err }, "could not listen for trigger changes"));
  dispatcher.start();
  runtime.closeHooks?.push(() => dispatcher.close());
  return s;
}

/** Evicts a trigger in this process immediately (other processes hear the NOTIFY). */
export function invalidateTrigger(runtime: Runtime, id: string): void {
  byRuntime.get(runtime)?.cache.invalidate(id);
}
