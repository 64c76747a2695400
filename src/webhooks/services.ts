import { perRuntime } from "../runtime/per-runtime.js";
import { Dispatcher } from "../jobs/dispatcher.js";
import { IngestBatcher } from "./ingest-batcher.js";

/** The per-process webhook machinery of one runtime: group commit and dispatcher. */
export interface WebhookServices {
  batcher: IngestBatcher;
  dispatcher: Dispatcher;
}

export const webhookServices = perRuntime(
  (runtime): WebhookServices => {
    const dispatcher = new Dispatcher(runtime);
    const batcher = new IngestBatcher(runtime.pool, (ids, traces) => dispatcher.enqueue(ids, traces));
    return { batcher, dispatcher };
  },
  ({ dispatcher }, runtime) => {
    dispatcher.start();
    runtime.closeHooks?.push(() => dispatcher.close());
  },
);
