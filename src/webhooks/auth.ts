import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { safeEqual } from "../infra/crypto.js";
import { standardWebhooksKey } from "../triggers/secrets.js";

/** Signed timestamps must lie within ±5 minutes of our clock (replay protection). */
export const TIMESTAMP_TOLERANCE_S = 300;

export interface AuthOptions {
  /** Secrets valid right now: the current one and any inside its grace window. */
  secrets: string[];
  now: number;
  /** The account accepts X-Service-Signature over the bare body, without a timestamp. */
  relaxTimestamp: boolean;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

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

function checkServiceSignature(headers: IncomingHttpHeaders, raw: Buffer, opts: AuthOptions): boolean {
  const sigHeader = header(headers, "x-service-signature");
  if (!sigHeader) return false;
  const provided = decodeServiceSignature(sigHeader);
  if (!provided) return false;
  const ts = header(headers, "x-service-timestamp")?.trim();
  if (ts !== undefined) {
    if (!freshTimestamp(ts, opts.now)) return false;
  } else if (!opts.relaxTimestamp) {
    return false;
  }
  let ok = false;
  for (const secret of opts.secrets) {
    const mac = createHmac("sha256", secret);
    if (ts !== undefined) mac.update(`${ts}.`);
    mac.update(raw);
    // No early exit: every secret costs the same whether or not an earlier one matched.
    ok = digestEqual(mac.digest(), provided) || ok;
  }
  return ok;
}

function checkStandardWebhooks(headers: IncomingHttpHeaders, raw: Buffer, opts: AuthOptions): boolean {
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp")?.trim();
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs) return false;
  if (!freshTimestamp(ts, opts.now)) return false;
  const provided = sigs
    .split(" ")
    .map((s) => s.trim())
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  if (provided.length === 0) return false;
  let ok = false;
  for (const secret of opts.secrets) {
    const expected = createHmac("sha256", standardWebhooksKey(secret)).update(`${id}.${ts}.`).update(raw).digest();
    for (const p of provided) ok = digestEqual(expected, p) || ok;
  }
  return ok;
}

function checkSharedSecret(headers: IncomingHttpHeaders, opts: AuthOptions): boolean {
  const given = header(headers, "x-trigger-secret");
  if (given === undefined) return false;
  let ok = false;
  for (const secret of opts.secrets) ok = safeEqual(given, secret) || ok;
  return ok;
}

/** True when any one of the three schemes authenticates the request. */
export function authenticateWebhook(headers: IncomingHttpHeaders, raw: Buffer, opts: AuthOptions): boolean {
  if (opts.secrets.length === 0) return false;
  return checkSharedSecret(headers, opts) || checkServiceSignature(headers, raw, opts) || checkStandardWebhooks(headers, raw, opts);
}

/** x-trigger-secret alone: the scheme the job endpoints accept. */
export function sharedSecretMatches(given: string | undefined, secrets: string[]): boolean {
  if (given === undefined) return false;
  let ok = false;
  for (const secret of secrets) ok = safeEqual(given, secret) || ok;
  return ok;
}
