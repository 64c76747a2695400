import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { readFileSync } from "node:fs";
import { validateHeaderName, validateHeaderValue } from "node:http";
// The module object, not a named import: tracing instruments `https.request` on it, so a call
// shows in the run's trace (src/telemetry scrubs its URL and the run's secrets).
import https from "node:https";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import type { Config } from "../config/config.js";
import { addressMatcher, classifyAddress } from "./address.js";
import { hostAllowed } from "./allowlist.js";

/**
 * `ctx.fetch`: one HTTPS request (redirects followed here, by hand) to hosts on the agent's
 * allowlist, never to an internal address. The address check runs inside the socket's own
 * `lookup`, on the addresses the connection is made to, so a name that resolves differently the
 * second time (DNS rebinding) is checked on the answer actually used; IP literals are checked
 * before connecting, and every redirect hop is checked like the first request.
 */

export interface EgressRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A call the policy refused or that failed on the network: the script sees the message. */
export class EgressError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
    this.name = "EgressError";
  }
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
  const exempt = addressMatcher(config.allowAddresses);
  const ca = config.caFile ? [...rootCertificates, readFileSync(config.caFile, "utf8")] : undefined;

  const check = (host: string, address: string): void => {
    if (config.allowPrivate || exempt(address)) return;
    const verdict = classifyAddress(address);
    if (!verdict.ok) throw new EgressError(`ctx.fetch refused: ${host} resolves to ${address}, a ${verdict.range} address`, true);
  };

  // The socket's resolver: EGRESS_RESOLVE answers first (tests, dev), else the system's.
  const lookup = (hostname: string, options: { all?: boolean }, callback: (...args: any[]) => void): void => {
    const done = (err: Error | null, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      try {
        for (const a of addresses) check(hostname, a.address);
      } catch (e) {
        return callback(e);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    const fixed = config.resolve[hostname.toLowerCase()];
    if (fixed) return done(null, [{ address: fixed, family: isIP(fixed) }]);
    dnsLookup(hostname, { all: true }, (err, addresses) => done(err, addresses));
  };

  function once(url: URL, method: string, headers: Record<string, string>, body: string | undefined, deadline: number): Promise<EgressResponse> {
    return new Promise((resolve, reject) => {
      const host = url.hostname.replace(/^\[|\]$/g, "");
      if (isIP(host)) {
        try {
          check(host, host);
        } catch (e) {
          return reject(e);
        }
      }
      const req = https.request(url, { method, headers, lookup: lookup as never, ca, agent: false, timeout: Math.max(1, deadline - Date.now()) }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > config.maxResponseBytes) {
            req.destroy(new EgressError(`ctx.fetch: the response from ${url.host} is larger than ${config.maxResponseBytes} bytes`, false));
            return;
          }
          chunks.push(c);
        });
        res.on("end", () => {
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
          resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (err) => reject(err instanceof EgressError ? err : new EgressError(`ctx.fetch: ${url.host}: ${err.message}`, false)));
      });
      // One deadline for the whole call (redirects included), not only for idle sockets.
      const timeout = () => req.destroy(new EgressError(`ctx.fetch: ${url.host} did not answer within ${config.timeoutMs} ms`, false));
      const timer = setTimeout(timeout, Math.max(1, deadline - Date.now()));
      req.on("timeout", timeout);
      req.on("close", () => clearTimeout(timer));
      req.on("error", (err) => reject(err instanceof EgressError ? err : new EgressError(`ctx.fetch: ${url.host}: ${err.message}`, false)));
      req.end(body);
    });
  }

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
      const res = await once(url, method, headers, body, deadline);
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
