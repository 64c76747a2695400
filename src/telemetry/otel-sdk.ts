import { createRequire } from "node:module";
import type { IncomingMessage } from "node:http";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { envDetectorSync, Resource } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OpenTelemetryPlugin } from "@temporalio/interceptors-opentelemetry";
import { addContextLogFields } from "../infra/logger.js";
import { REDACTOR_KEY, RedactorTagger, ScrubbingExporter } from "./redact.js";
import type { Tracing } from "./types.js";

/** Probes and scrapes are not worth a trace each. */
const UNTRACED = /^\/(healthz|readyz|metrics)(\?|$)/;

/** Loaded only when tracing is configured (see tracing.ts). */
export function startOtel(options: { tracesUrl: string; serviceName: string }): Tracing {
  // OTEL_RESOURCE_ATTRIBUTES still applies; service.name comes from config (OTEL_SERVICE_NAME).
  const resource = envDetectorSync.detect().merge(new Resource({ "service.name": options.serviceName }));
  // OTLP/HTTP with JSON bodies; OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT are read by the exporter.
  // Spans are scrubbed (query strings, URL credentials, a run's secrets) before they are exported.
  const processor = new BatchSpanProcessor(new ScrubbingExporter(new OTLPTraceExporter({ url: options.tracesUrl })));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new RedactorTagger(), processor] });
  provider.register(); // AsyncLocalStorage context manager + W3C trace-context propagator

  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.test(req.url ?? ""),
        // Name server spans by route template (Express has matched it by the time the response ends).
        applyCustomAttributesOnSpan: (span, req) => {
          const r = req as IncomingMessage & { route?: { path?: string }; baseUrl?: string };
          if (r.route?.path === undefined) return;
          const route = `${r.baseUrl ?? ""}${r.route.path}`;
          span.setAttribute("http.route", route);
          span.updateName(`${r.method} ${route}`);
        },
      }),
    ],
  });
  // The instrumentation patches modules as they are require()d; this is an ES module program whose
  // `node:http` may already be loaded, so require them once here: the patch lands on the shared
  // module objects (http.request, Server.prototype.emit) that the ESM imports see too.
  const require = createRequire(import.meta.url);
  require("node:http");
  require("node:https");

  // Log lines written inside a span name it, so logs and traces find each other.
  addContextLogFields(() => {
    const span = trace.getSpan(context.active())?.spanContext();
    return span ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
  });

  const tracer = trace.getTracer("agent-gateway");
  return {
    temporalPlugin: new OpenTelemetryPlugin({ resource, spanProcessor: processor }),
    traceparent() {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent ?? null;
    },
    inStoredTrace(traceparent, name, attributes, fn) {
      const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
      return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent, async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
          throw err;
        } finally {
          span.end();
        }
      });
    },
    withRedaction: (redact, fn) => context.with(context.active().setValue(REDACTOR_KEY, redact), fn),
    flush: () => provider.forceFlush(),
  };
}
