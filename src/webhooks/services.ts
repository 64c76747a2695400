import type { Runtime } from "../runtime/runtime.js";
import { Dispatcher } from "../jobs/dispatcher.js";
import { IngestBatcher } from "./ingest-batcher.js";

/** The per-process webhook machinery of one runtime: group commit and dispatcher. */
export interface WebhookServices {
  batcher: IngestBatcher;
  dispatcher: Dispatcher;
}

const byRuntime = new WeakMap<Runtime, WebhookServices>();

export function webhookServices(runtime: Runtime): WebhookServices {
  let s = byRuntime.get(runtime);
  if (s) return s;
  const dispatcher = new Dispatcher(runtime);
  const batcher = new IngestBatcher(runtime.pool, (ids, traces) => dispatcher.enqueue(ids, traces));
  s = { batcher, dispatcher };
  byRuntime.set(runtime, s);
  dispatcher.start();
  runtime.closeHooks?.push(() => dispatcher.close());
  return s;
}
