import { AppError } from "../errors/app-error.js";

/**
 * The gateway's errors as A2A JSON-RPC errors. Invalid input is `-32602` (Invalid params) with
 * HTTP 200 like every JSON-RPC error; what the chat API answers with 401, 402, 409, 429 or 5xx
 * keeps that HTTP status (A2A lets authentication and system errors use them) under the
 * implementation-defined code -32000. The chat error code travels in `data`: v1.0 as a
 * google.rpc.ErrorInfo (`metadata.code`), v0.3 as `{ code, status }`.
 */

export const GATEWAY_ERROR = -32000;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
const CONTENT_TYPE_NOT_SUPPORTED = -32005;

const PARAMS_ERRORS = new Set(["invalid_request_error", "invalid_json", "validation_failed", "model_not_found", "payload_too_large", "not_found", "thread_not_found"]);

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export function appErrorToJsonRpc(err: AppError, legacy: boolean): { httpStatus: number; error: JsonRpcError } {
  const code = err.code === "unsupported_media_type" ? CONTENT_TYPE_NOT_SUPPORTED : PARAMS_ERRORS.has(err.code) ? INVALID_PARAMS : err.code === "internal_error" ? INTERNAL_ERROR : GATEWAY_ERROR;
  const httpStatus = code === GATEWAY_ERROR || code === INTERNAL_ERROR ? err.status : 200;
  const fields = { code: err.code, status: err.status, ...(err.param ? { param: err.param } : {}) };
  const data = legacy
    ? fields
    : [
        {
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: err.code.toUpperCase(),
          domain: "agent-gateway",
          metadata: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])),
        },
      ];
  return { httpStatus, error: { code, message: err.message, data } };
}

/** An error that is not an AppError: a bug; nothing of it is shown. */
export const internalJsonRpcError = (): JsonRpcError => ({ code: INTERNAL_ERROR, message: "Internal error" });

/**
 * The JSON-RPC 2.0 envelope (§4): an object with `jsonrpc: "2.0"`, a string `method` and an id
 * that is a string, an integer or null. Anything else is Invalid Request (-32600); the SDK's
 * transports would answer Invalid params, which is for a method's own parameters.
 */
export function envelopeError(body: unknown): JsonRpcError | undefined {
  const r = body as { jsonrpc?: unknown; method?: unknown; id?: unknown } | null;
  const idOk = (id: unknown) => id === undefined || id === null || typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
  if (typeof r !== "object" || r === null || Array.isArray(r) || r.jsonrpc !== "2.0" || typeof r.method !== "string" || r.method === "" || !idOk(r.id)) {
    return { code: INVALID_REQUEST, message: "Invalid Request: a JSON-RPC 2.0 request object with jsonrpc \"2.0\", a method and a string, integer or null id" };
  }
  return undefined;
}
