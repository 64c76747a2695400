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
