import type { WorkerPlugin } from "@temporalio/worker";
import type { ClientPlugin } from "@temporalio/client";
import type { Config } from "../config/config.js";

/**
 * OpenTelemetry tracing, switched on by the standard OTEL_* variables (see config.telemetry).
 * Off, nothing of OpenTelemetry is loaded: the SDK module is imported dynamically on first use,
 * and callers only ever reach it through the optional `runtime.tracing`.
 */
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
  /** Exports what is buffered (at shutdown; spans are otherwise exported in batches). */
  flush(): Promise<void>;
}

let started: Promise<Tracing> | undefined;

/** One tracer provider per process (OpenTelemetry's globals), shared by every runtime in it. */
export function startTracing(config: Pick<Config, "telemetry">): Promise<Tracing> | undefined {
  const { telemetry } = config;
  if (!telemetry.tracesUrl) return undefined;
  started ??= import("./otel-sdk.js").then((sdk) => sdk.startOtel({ tracesUrl: telemetry.tracesUrl!, serviceName: telemetry.serviceName }));
  return started;
}
