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
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie"]);

export type Egress = (req: EgressRequest, options: { allow: string[]; idempotencyKey: string }) => Promise<EgressResponse>;

export function createEgress(config: Config["egress"]): Egress {
  const connector = createConnector(config);

  return async (input, { allow, idempotencyKey }) => {
    let method = input.method.toUpperCase();
    if (!METHODS.includes(method)) throw new EgressError(`ctx.fetch: method must be one of ${METHODS.join(", ")}`, true);
    let body = method === "GET" || method === "HEAD" ? undefined : input.body;
    const headers: Record<string, string> = { "user-agent": "agent-gateway", "idempotency-key": idempotencyKey };
    for (const [k, v] of Object.entries(input.headers)) if (!DROPPED_HEADERS.has(k.toLowerCase())) headers[k.toLowerCase()] = String(v);
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
      // Credentials never follow a redirect to another host.
      if (next.host !== url.host) for (const h of CREDENTIAL_HEADERS) delete headers[h];
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
