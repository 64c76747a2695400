import { pino, type DestinationStream, type Logger } from "pino";
import { currentRequestContext } from "./request-context.js";

export type { Logger };

/**
 * JSON logs. Credentials never reach a log line: known header and field names are redacted by
 * path, and `scrubSecrets` masks token-shaped strings wherever they appear in messages.
 */
const REDACT_PATHS = [
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  'req.headers["x-trigger-secret"]',
  'req.headers["x-service-signature"]',
  'req.headers["webhook-signature"]',
  'req.headers["idempotency-key"]',
  // The accepted id is logged as `requestId`; the raw header may be hostile (see http/request-id.ts).
  'req.headers["x-request-id"]',
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  "*.authorization",
  "*.apiKey",
  "*.api_key",
  "*.token",
  "*.adminToken",
  "*.operatorToken",
  "*.secret",
  "*.password",
  "*.key",
  "*.payload",
  "config.operatorToken",
  "config.secretEncryptionKey",
];

const TOKEN_PATTERN = /\b(a2a|adm|opr)_[A-Za-z0-9]{8,}|\bwhsec_[A-Za-z0-9+/=]{8,}/g;

export function scrubSecrets(text: string): string {
  return text.replace(TOKEN_PATTERN, (m) => `${m.slice(0, 4)}[REDACTED]`);
}

const NO_FIELDS = {};

type ContextFields = () => Record<string, string> | undefined;
let contextFields: ContextFields | undefined;

/** Fields every line gets from the async context (tracing adds `trace_id`/`span_id` when on). */
export function addContextLogFields(fields: ContextFields): void {
  contextFields = fields;
}

/** `destination` defaults to stdout; tests pass a stream to read what a request logged. */
export function createLogger(level: string, name = "agent-gateway", destination?: DestinationStream): Logger {
  return pino({
    name,
    level,
    // Every line written while serving a request carries its id, whichever module logs it.
    mixin: () => {
      const ctx = currentRequestContext();
      const extra = contextFields?.();
      if (!extra) return ctx ? { requestId: ctx.requestId } : NO_FIELDS;
      return ctx ? { requestId: ctx.requestId, ...extra } : extra;
    },
    redact: { paths: REDACT_PATHS, censor: "[REDACTED]" },
    formatters: { level: (label) => ({ level: label }) },
    hooks: {
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) {
          const a = args[i];
          if (typeof a === "string") args[i] = scrubSecrets(a);
        }
        return method.apply(this, args as Parameters<typeof method>);
      },
    },
    serializers: {
      // Callers sometimes log a string or a non-Error value as `err`; a serializer that throws
      // would crash the process from inside a log call.
      err: (err: unknown) =>
        err instanceof Error
          ? { type: err.name, message: scrubSecrets(String(err.message ?? "")), stack: err.stack ? scrubSecrets(err.stack) : undefined }
          : { message: scrubSecrets(String(err)) },
    },
  }, destination);
}
