import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import { scrubSecrets } from "../infra/logger.js";
import { runWithRequestContext } from "../infra/request-context.js";

export const REQUEST_ID_HEADER = "x-request-id";

/**
 * A caller's id is kept when it is short and plain (what proxies and tracing tools send: UUIDs,
 * hex, base64url, `host:counter`…); anything else — long, control characters, header-splitting
 * attempts, a credential pasted by mistake — is replaced, never echoed or logged.
 */
const ACCEPTABLE = /^[A-Za-z0-9._~:+/=@-]{1,128}$/;

export function acceptableRequestId(value: unknown): value is string {
  return typeof value === "string" && ACCEPTABLE.test(value) && scrubSecrets(value) === value;
}

/**
 * First middleware of the API: every response carries `x-request-id` (the caller's when
 * acceptable, else a new UUID), and the rest of the request runs inside a request context so each
 * log line it causes carries the same id.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const sent = req.headers[REQUEST_ID_HEADER];
    const id = acceptableRequestId(sent) ? sent : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, id);
    res.locals.requestId = id;
    runWithRequestContext({ requestId: id }, next);
  };
}
