import type { Attributes, AttributeValue, Context } from "@opentelemetry/api";
import { createContextKey } from "@opentelemetry/api";
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, Span, SpanExporter, SpanProcessor, TimedEvent } from "@opentelemetry/sdk-trace-base";

/**
 * What leaves the process in spans carries no query string, no URL credentials and no secret of
 * the run that made the call. The HTTP instrumentation records full URLs (incoming requests,
 * upstream and `ctx.fetch` calls), and a query string often holds a key or a token: every span is
 * scrubbed on its way to the exporter, and a span started inside `withRedaction` also passes
 * through that run's redactor (its agent's secret values, wherever they appear).
 */

export const REDACTED = "[redacted]";

/** The run's redactor, carried in the OpenTelemetry context to the spans started under it. */
export const REDACTOR_KEY = createContextKey("agent-gateway.redactor");
export type TextRedactor = (text: string) => string;

/** Attributes that hold a URL or a request target: everything from `?` (or `#`) on goes. */
const URL_ATTRIBUTES = new Set(["http.url", "http.target", "url.full", "url.path", "http.route"]);
/** Attributes that are a query string and nothing else. */
const QUERY_ATTRIBUTES = new Set(["url.query"]);

/** `?query#fragment` → `?[redacted]`; a bare `#fragment` → `#[redacted]`. */
const tail = (rest: string) => (rest.startsWith("?") ? `?${REDACTED}` : `#${REDACTED}`);

/** Scrubs URLs inside any text: userinfo, query strings and fragments of absolute URLs. */
export function scrubUrls(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, `$1${REDACTED}@`)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s?#]*)([?#][^\s"'<>]*)/gi, (_m, base: string, rest: string) => base + tail(rest));
}

function scrubValue(key: string, value: string, redact: TextRedactor | undefined): string {
  let v = value;
  if (QUERY_ATTRIBUTES.has(key)) return v === "" ? v : REDACTED;
  if (URL_ATTRIBUTES.has(key)) v = v.replace(/[?#][\s\S]*$/, tail);
  v = scrubUrls(v);
  return redact ? redact(v) : v;
}

export function scrubAttributes(attributes: Attributes, redact?: TextRedactor): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === "string") out[key] = scrubValue(key, value, redact);
    else if (Array.isArray(value)) out[key] = value.map((v) => (typeof v === "string" ? scrubValue(key, v, redact) : v)) as AttributeValue;
    else out[key] = value;
  }
  return out;
}

/** Remembers, per span, the redactor of the context it started in (the exporter sees no context). */
export class RedactorTagger implements SpanProcessor {
  static readonly redactors = new WeakMap<object, TextRedactor>();
  onStart(span: Span, parentContext: Context): void {
    const redact = parentContext.getValue(REDACTOR_KEY) as TextRedactor | undefined;
    if (redact) RedactorTagger.redactors.set(span, redact);
  }
  onEnd(): void {}
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** The span as exported: its own fields, with name, attributes, events and status message scrubbed. */
export function scrubSpan(span: ReadableSpan): ReadableSpan {
  const redact = RedactorTagger.redactors.get(span);
  const text = (t: string) => (redact ? redact(scrubUrls(t)) : scrubUrls(t));
  const events: TimedEvent[] = span.events.map((e) => ({ ...e, name: text(e.name), ...(e.attributes ? { attributes: scrubAttributes(e.attributes, redact) } : {}) }));
  const status = span.status.message === undefined ? span.status : { ...span.status, message: text(span.status.message) };
  // Everything else (span context, times, resource, scope) is read through the prototype.
  return Object.create(span, {
    name: { value: text(span.name), enumerable: true },
    attributes: { value: scrubAttributes(span.attributes, redact), enumerable: true },
    events: { value: events, enumerable: true },
    status: { value: status, enumerable: true },
  }) as ReadableSpan;
}

/** Wraps the OTLP exporter: every span is scrubbed before it is serialized. */
export class ScrubbingExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans.map(scrubSpan), resultCallback);
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
