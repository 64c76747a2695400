import { validateHeaderName, validateHeaderValue } from "node:http";
import type { Config } from "../config/config.js";
import { hostAllowed } from "./allowlist.js";
import { createConnector, EgressError, type EgressResponse } from "./connect.js";

export { EgressError, type EgressResponse } from "./connect.js";

/**
 * `ctx.fetch`: one HTTPS request (redirects followed here, by hand) to hosts on the agent's
 * allowlist, never to an internal address (the checks are the connector's, src/egress/connect.ts);
 * every redirect hop is checked like the first request.
 */

export interface EgressRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
/** Set by us or by the connection, never by a script. */
const DROPPED_HEADERS = new Set(["host", "content-length", "connection", "transfer-encoding", "keep-alive", "upgrade", "te", "trailer", "proxy-authorization", "idempotency-key"]);
/** Headers that carry credentials by convention: they never follow a redirect to another host. */
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "x-auth-token", "x-access-token", "x-amz-security-token", "x-goog-api-key"]);
/** Names that say a header holds a credential (x-github-token, x-hub-signature, x-session-id, …). */
const CREDENTIAL_NAME = /auth|token|secret|passw|key|session|signature|credential|cookie/i;

export interface EgressOptions {
  allow: string[];
  idempotencyKey: string;
  /** Whether a header value contains one of the agent's secrets: such headers never follow a redirect to another host. */
  carriesSecret?: (value: string) => boolean;
}

export type Egress = (req: EgressRequest, options: EgressOptions) => Promise<EgressResponse>;

/** A script's headers, lower-cased; a name or value Node would refuse is a script error, not a crash of the run. */
function scriptHeaders(given: Record<string, string>, idempotencyKey: string): Record<string, string> {
  const headers: Record<string, string> = { "user-agent": "agent-gateway", "idempotency-key": idempotencyKey };
  for (const [k, v] of Object.entries(given)) {
    const name = k.toLowerCase();
    if (DROPPED_HEADERS.has(name)) continue;
    const value = String(v);
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      throw new EgressError(`ctx.fetch: invalid header ${JSON.stringify(k.slice(0, 100))}: names must be HTTP tokens and values must not contain control characters`, true);
    }
    headers[name] = value;
  }
  return headers;
}

/** Before following a redirect to another host: every header that carries a credential or a secret goes. */
function dropCredentials(headers: Record<string, string>, carriesSecret: (value: string) => boolean): void {
  for (const [name, value] of Object.entries(headers)) {
    if (name === "idempotency-key") continue; // ours, not a credential: the receiver deduplicates with it
    if (CREDENTIAL_HEADERS.has(name) || CREDENTIAL_NAME.test(name) || carriesSecret(value)) delete headers[name];
  }
}

export function createEgress(config: Config["egress"]): Egress {
  const connector = createConnector(config);

  return async (input, { allow, idempotencyKey, carriesSecret = () => false }) => {
    let method = input.method.toUpperCase();
    if (!METHODS.includes(method)) throw new EgressError(`ctx.fetch: method must be one of ${METHODS.join(", ")}`, true);
    let body = method === "GET" || method === "HEAD" ? undefined : input.body;
    const headers = scriptHeaders(input.headers, idempotencyKey);
    const deadline = Date.now() + config.timeoutMs;
    let url = parseUrl(input.url);
    for (let hop = 0; ; hop++) {
      if (url.protocol !== "https:") throw new EgressError(`ctx.fetch refused: only https:// URLs are allowed (got ${url.protocol}//${url.host})`, true);
      if (!hostAllowed(allow, url.hostname)) throw new EgressError(`ctx.fetch refused: ${url.hostname} is not on this agent's egress allowlist`, true);
      const { bytes: _bytes, truncated: _truncated, ...res } = await connector.once(url, { method, headers, body, deadline, maxResponseBytes: config.maxResponseBytes, overflow: "fail", label: "ctx.fetch", timeoutMs: config.timeoutMs });
      const location = res.headers.location;
      if (![301, 302, 303, 307, 308].includes(res.status) || !location) return res;
      if (hop >= config.maxRedirects) throw new EgressError(`ctx.fetch: more than ${config.maxRedirects} redirects`, false);
      const next = parseUrl(location, url);
      // Credentials and secrets never follow a redirect to another host.
      if (next.host !== url.host) dropCredentials(headers, carriesSecret);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
        delete headers["content-type"];
      }
      url = next;
    }
  };
}

function parseUrl(raw: string, base?: URL): URL {
  try {
    return new URL(raw, base);
  } catch {
    throw new EgressError(`ctx.fetch: not a URL: ${String(raw).slice(0, 200)}`, true);
  }
}
