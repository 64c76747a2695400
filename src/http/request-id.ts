import type { RequestHandler } from "express";
import { runWithRequestContext } from "../infra/request-context.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../infra/request-id.js";

export { acceptableRequestId, REQUEST_ID_HEADER } from "../infra/request-id.js";

/**
 * First middleware of the API: every response carries `x-request-id` (the caller's when
 * acceptable, else a new UUID), and the rest of the request runs inside a request context so each
 * log line it causes carries the same id.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const id = requestIdOf(req.headers);
    res.setHeader(REQUEST_ID_HEADER, id);
    res.locals.requestId = id;
    runWithRequestContext({ requestId: id }, next);
  };
}
