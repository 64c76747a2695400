import { z } from "zod";
import { area, variable } from "../variable.js";
import { bool, url } from "../values.js";

/** The configuration variables of the area "Telemetry". */
export const telemetryArea = area("Telemetry", "OpenTelemetry traces and the metrics endpoint.", {
  // OpenTelemetry's standard names; tracing is on when an endpoint is set (see docs/operations/telemetry.md).
  OTEL_EXPORTER_OTLP_ENDPOINT: variable(url(["http:", "https:"]).optional(), "OTLP/HTTP collector base URL, e.g. `http://collector:4318`; traces go to `…/v1/traces` (docs/operations/telemetry.md)", "unset (no tracing)"),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: variable(url(["http:", "https:"]).optional(), "Full traces URL; overrides the one derived from `OTEL_EXPORTER_OTLP_ENDPOINT`", "unset"),
  OTEL_EXPORTER_OTLP_PROTOCOL: variable(z.enum(["http/json", "http/protobuf"], { message: "must be http/json or http/protobuf (spans are sent as OTLP/HTTP JSON, which OTLP/HTTP receivers accept on either; gRPC is not supported)" }).optional(), "`http/json` or `http/protobuf` (spans are sent as OTLP/HTTP JSON, which OTLP/HTTP receivers accept on either); gRPC is not supported", "`http/json`"),
  OTEL_SERVICE_NAME: variable(z.string().trim().min(1).default("agent-gateway"), "`service.name` of this process's spans (e.g. `gateway-api`, `gateway-worker`)"),
  OTEL_TRACES_EXPORTER: variable(z.enum(["otlp", "none"], { message: "must be otlp or none" }).optional(), "`none` turns tracing off even with an endpoint set", "`otlp`"),
  OTEL_SDK_DISABLED: variable(bool.optional(), "`true` turns tracing off", "`false`"),
  METRICS_JOBS_REFRESH_SECONDS: variable(z.coerce.number().min(1).max(3600).default(15), "The API's `/metrics` counts active jobs at most this often (docs/operations/telemetry.md)"),
});
