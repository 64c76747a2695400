import type { IncomingHttpHeaders } from "node:http";
import type { Request } from "express";
import { AppError } from "../errors/app-error.js";

/**
 * HTTP credential helpers shared by every surface (GraphQL, chat, webhooks, job endpoints). This
 * module sits below the capabilities and imports none of them.
 */

/** Parses `Bearer <token>`; tolerates any case of the scheme and surrounding spaces. */
export function bearerToken(header: string | undefined | null): string | undefined {
  if (!header) return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * An RFC 6750 Bearer challenge: `params` (realm, resource metadata), and when a credential was
 * sent, `error="invalid_token"` with the refusal as `error_description` (none without one, §3.1).
 * Quotes, backslashes and anything outside printable ASCII are dropped from the values.
 */
export function bearerChallenge(params: Record<string, string>, refused?: string): string {
  const quoted = (s: string) => `"${s.replace(/["\\]/g, "").replace(/[^\x20-\x7e]/g, "")}"`;
  const parts = Object.entries(params).map(([k, v]) => `${k}=${quoted(v)}`);
  if (refused) parts.push(`error="invalid_token"`, `error_description=${quoted(refused)}`);
  return `Bearer ${parts.join(", ")}`;
}

/**
 * An HTTP/1.1 reason phrase that carries the refusal ("Unauthorized: <message>"): clients that
 * raise on the status alone and print only the status line (the Python a2a-sdk) show it.
 */
export function reasonPhrase(standard: string, message: string): string {
  return `${standard}: ${message}`.replace(/[^\x20-\x7e]/g, "").slice(0, 300);
}

/** A header's value; for a repeated header, its first value. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A request counts as TLS when it arrived over TLS, or a trusted proxy says so (`trust proxy`). */
export function requireHttps(allowInsecureHttp: boolean, req: Request): void {
  if (!allowInsecureHttp && !req.secure) {
    throw new AppError("https_required", "Webhook and job endpoints require HTTPS");
  }
}
