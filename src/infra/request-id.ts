import { randomUUID } from "node:crypto";
import { scrubSecrets } from "./logger.js";

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

/** The id of a request: the caller's `x-request-id` when acceptable, else a new UUID. */
export function requestIdOf(headers: Record<string, string | string[] | undefined>): string {
  const sent = headers[REQUEST_ID_HEADER];
  return acceptableRequestId(sent) ? sent : randomUUID();
}
