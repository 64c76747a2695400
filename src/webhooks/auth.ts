import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Webhook } from "standardwebhooks";
import { headerValue } from "../http/auth.js";
import { safeEqual } from "../infra/crypto.js";
import { standardWebhooksKey } from "../triggers/secrets.js";

/** Signed timestamps must lie within ±5 minutes of our clock (replay protection). */
export const TIMESTAMP_TOLERANCE_S = 300;

export interface AuthOptions {
  /** Secrets valid right now: the current one and any inside its grace window. */
  secrets: string[];
  now: number;
}

/**
 * `ok`: a scheme authenticated the request. `needs-relaxed-timestamp`: only an X-Service-Signature
 * over the bare body matched, which counts only if the account relaxed the timestamp requirement;
 * the caller reads that setting fresh, so a change applies to the very next request.
 */
export type WebhookAuth = "ok" | "needs-relaxed-timestamp" | "denied";

function freshTimestamp(value: string, now: number): boolean {
  if (!/^\d{1,12}$/.test(value)) return false;
  return Math.abs(now / 1000 - Number(value)) <= TIMESTAMP_TOLERANCE_S;
}

/** Equal-length digests compared in constant time; a length mismatch is a plain mismatch. */
function digestEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `sha256=<hex>`, bare hex, or base64 (standard or URL-safe) of the 32-byte HMAC. */
function decodeServiceSignature(value: string): Buffer | undefined {
  const v = value.trim();
  const prefixed = /^sha256=([0-9a-fA-F]{64})$/.exec(v);
  if (prefixed) return Buffer.from(prefixed[1]!, "hex");
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(v)) {
    const buf = Buffer.from(v.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    return buf.length === 32 ? buf : undefined;
  }
  return undefined;
}

function checkServiceSignature(headers: IncomingHttpHeaders, raw: Buffer, opts: AuthOptions): WebhookAuth {
  const sigHeader = headerValue(headers, "x-service-signature");
  if (!sigHeader) return "denied";
  const provided = decodeServiceSignature(sigHeader);
  if (!provided) return "denied";
  const ts = headerValue(headers, "x-service-timestamp")?.trim();
  if (ts !== undefined && !freshTimestamp(ts, opts.now)) return "denied";
  let ok = false;
  for (const secret of opts.secrets) {
    const mac = createHmac("sha256", secret);
    if (ts !== undefined) mac.update(`${ts}.`);
    mac.update(raw);
    // No early exit: every secret costs the same whether or not an earlier one matched.
    ok = digestEqual(mac.digest(), provided) || ok;
  }
  if (!ok) return "denied";
  return ts === undefined ? "needs-relaxed-timestamp" : "ok";
}

/**
 * Standard Webhooks through the `standardwebhooks` package. Measured here (Node 24): 13 µs per
 * verification of a 1 KB body (node:crypto directly: 10 µs); at the 1 MB limit 6.8 ms against
 * 0.6 ms, because the package hashes in JavaScript. Typical webhook bodies are small, so the
 * library wins over keeping our own copy of the scheme.
 */
function checkStandardWebhooks(headers: IncomingHttpHeaders, raw: Buffer, opts: AuthOptions): boolean {
  const id = headerValue(headers, "webhook-id");
  const ts = headerValue(headers, "webhook-timestamp")?.trim();
  const signature = headerValue(headers, "webhook-signature");
  if (!id || !ts || !signature) return false;
  // Our clock decides freshness (the library checks its own, Date.now(), as well).
  if (!freshTimestamp(ts, opts.now)) return false;
  const given = { "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": signature };
  let ok = false;
  for (const secret of opts.secrets) {
    try {
      new Webhook(standardWebhooksKey(secret), { format: "raw" }).verify(raw, given, { jsonParse: false });
      ok = true;
    } catch {
      /* not this secret */
    }
  }
  return ok;
}

/** x-trigger-secret against every valid secret, in constant time per secret. */
export function sharedSecretMatches(given: string | undefined, secrets: string[]): boolean {
  if (given === undefined) return false;
  let ok = false;
  for (const secret of secrets) ok = safeEqual(given, secret) || ok;
  return ok;
}

/** Tries the three schemes of DESIGN.md §6; the first that authenticates decides. */
export function authenticateWebhook(headers: IncomingHttpHeaders, raw: Buffer, opts: AuthOptions): WebhookAuth {
  if (opts.secrets.length === 0) return "denied";
  if (sharedSecretMatches(headerValue(headers, "x-trigger-secret"), opts.secrets)) return "ok";
  if (checkStandardWebhooks(headers, raw, opts)) return "ok";
  return checkServiceSignature(headers, raw, opts);
}
