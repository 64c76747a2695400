import { createHmac } from "node:crypto";
import { safeEqual, sha256Hex } from "../infra/crypto.js";

/**
 * The answer URL's token: HMAC-SHA256 of the request id under the service's secret key, so it is
 * unguessable (256 bits nobody without SECRET_ENCRYPTION_KEY can compute), never stored (only its
 * sha256 is, to check it), and the same each time the job status or the callback event shows it.
 * Single use and expiry come from the request's row, not from the token.
 */
export function answerToken(key: Buffer, requestId: string): string {
  return createHmac("sha256", key).update(`input-request:${requestId}`).digest("base64url");
}

export const tokenHash = (token: string): string => sha256Hex(token);

export function tokenMatches(token: string, hash: string): boolean {
  return safeEqual(tokenHash(token), hash);
}

/** The capability URL under PUBLIC_BASE_URL: the token in the query, which the request log leaves out. */
export function answerUrl(publicBaseUrl: string, key: Buffer, requestId: string): string {
  return `${publicBaseUrl}/api/input-requests/${requestId}/answer?token=${answerToken(key, requestId)}`;
}
