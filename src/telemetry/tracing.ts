import type { Config } from "../config/config.js";
import type { Tracing } from "./types.js";

export type { Tracing };

/**
 * OpenTelemetry tracing, switched on by the standard OTEL_* variables (see config.telemetry).
 * Off, nothing of OpenTelemetry is loaded: the SDK module is imported dynamically on first use,
 * and callers only ever reach it through the optional `runtime.tracing`.
 */
let started: Promise<Tracing> | undefined;

/** One tracer provider per process (OpenTelemetry's globals), shared by every runtime in it. */
export function startTracing(config: Pick<Config, "telemetry">): Promise<Tracing> | undefined {
  const { telemetry } = config;
  if (!telemetry.tracesUrl) return undefined;
  started ??= import("./otel-sdk.js").then((sdk) => sdk.startOtel({ tracesUrl: telemetry.tracesUrl!, serviceName: telemetry.serviceName }));
  return started;
}
