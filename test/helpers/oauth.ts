import { createHash, randomBytes } from "node:crypto";

/** OAuth client steps for tests: registration, a PKCE authorization URL, token requests. */
export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export async function register(base: string, metadata: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const u = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: "code", state: randomBytes(8).toString("hex"), ...params })) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}

export async function tokenRequest(base: string, form: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}
