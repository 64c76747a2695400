import type { WorkerPlugin } from "@temporalio/worker";
import type { ClientPlugin } from "@temporalio/client";

/** What a process with tracing on offers the rest of the code (see tracing.ts). */
export interface Tracing {
  /** Client + worker interceptors and the workflow span sink of @temporalio/interceptors-opentelemetry. */
  temporalPlugin: ClientPlugin & WorkerPlugin;
  /** The W3C `traceparent` of the active span (the current request), to store with work done later. */
  traceparent(): string | null;
  /**
   * Runs `fn` in a new span whose parent is a stored `traceparent` (a job's webhook request), so
   * work started later, by another process or loop, continues that trace. Without one the span is
   * a root: it must not borrow whatever request happens to be active.
   */
  inStoredTrace<T>(traceparent: string | null | undefined, name: string, attributes: Record<string, string>, fn: () => Promise<T>): Promise<T>;
  /**
   * Runs `fn` so that every span started inside it (an HTTP client span of `ctx.fetch`) passes
   * its name and attributes through `redact` before export (a run's secret values).
   */
  withRedaction<T>(redact: (text: string) => string, fn: () => Promise<T>): Promise<T>;
  /** Exports what is buffered (at shutdown; spans are otherwise exported in batches). */
  flush(): Promise<void>;
}
