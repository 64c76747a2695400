import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config/config.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startTracing } from "./tracing.js";

const base = { NODE_ENV: "test", OPERATOR_TOKEN: "o".repeat(24), SECRET_ENCRYPTION_KEY: "a".repeat(64) };

describe("tracing configuration (standard OTEL_* names)", () => {
  it("is off without an endpoint, and on with one (traces path appended, or the traces endpoint as given)", () => {
    expect(loadConfig(base).telemetry.tracesUrl).toBeUndefined();
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).telemetry.tracesUrl).toBe("http://collector:4318/v1/traces");
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t.example/otlp/traces" }).telemetry.tracesUrl).toBe(
      "https://t.example/otlp/traces",
    );
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }).telemetry.tracesUrl).toBeUndefined();
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" }).telemetry.tracesUrl).toBeUndefined();
    expect(loadConfig({ ...base, OTEL_SERVICE_NAME: "gw-worker" }).telemetry.serviceName).toBe("gw-worker");
  });

  it("rejects what it cannot honour, naming the variable", () => {
    expect(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/json or http\/protobuf/);
    expect(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(ConfigError);
  });
});

describe("tracing off: no OpenTelemetry SDK in the process", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  });
  afterAll(async () => app?.close());

  it("loads no SDK module and gives the runtime no tracing", async () => {
    expect(startTracing(app.config)).toBeUndefined();
    expect(app.runtime.tracing).toBeUndefined();
    await fetch(`${app.url}/healthz`);
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.filter((m) => /@opentelemetry\/(sdk-|exporter-|instrumentation)|interceptors-opentelemetry/.test(m))).toEqual([]);
    // The probe itself works: the Temporal SDK (always loaded) is in that cache.
    expect(loaded.some((m) => m.includes("@temporalio/worker"))).toBe(true);
  });
});
