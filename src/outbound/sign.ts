import { createHmac } from "node:crypto";

/**
 * Standard Webhooks (standardwebhooks.com): the HMAC key of a secret, and the headers of a signed
 * request. One signature per secret, space-separated, so a receiver that still has the previous
 * secret (during the 24-hour grace after a rotation) and one that has the new one both verify.
 */

/** The HMAC key: the bytes after `whsec_` (base64), else the secret's own bytes. */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith("whsec_")) {
    const decoded = Buffer.from(secret.slice(6), "base64");
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, "utf8");
}

export function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  return createHmac("sha256", standardWebhooksKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
}

export function standardWebhookHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  const headers: Record<string, string> = { "webhook-id": id, "webhook-timestamp": String(timestampSeconds) };
  if (secrets.length > 0) headers["webhook-signature"] = secrets.map((s) => `v1,${signatureOf(s, id, timestampSeconds, body)}`).join(" ");
  return headers;
}
