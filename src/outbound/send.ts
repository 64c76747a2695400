import type { Config } from "../config/config.js";
import { createConnector, EgressError } from "../egress/connect.js";

/**
 * One outbound HTTP attempt (a POST of a delivery), over the same connector as `ctx.fetch`:
 * HTTPS to public addresses only (checked after DNS), http:// to loopback only with
 * EGRESS_ALLOW_PRIVATE; no redirect followed (a 3xx is a failed attempt); a connect timeout and one
 * for the whole answer; the body read up to a cap, then the connection closed.
 */

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface AttemptOutcome {
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed (no answer, refused, not 2xx); null when it succeeded. */
  error: string | null;
  /** The policy refused the target: retrying cannot help. */
  refused: boolean;
  responseBytes: number;
  responseExcerpt: string | null;
}

const EXCERPT_CHARS = 1000;

export type OutboundSender = (req: OutboundRequest) => Promise<AttemptOutcome>;

export function createOutboundSender(egress: Config["egress"], outbound: Config["outbound"]): OutboundSender {
  const connector = createConnector(egress);
  return async ({ url, headers, body }) => {
    const started = Date.now();
    const elapsed = () => Date.now() - started;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { statusCode: null, durationMs: 0, error: "refused: not a URL", refused: true, responseBytes: 0, responseExcerpt: null };
    }
    try {
      const res = await connector.once(parsed, {
        method: "POST",
        headers: { "user-agent": "agent-gateway", "content-type": "application/json", ...headers },
        body,
        deadline: started + outbound.timeoutMs,
        connectDeadline: started + outbound.connectTimeoutMs,
        maxResponseBytes: outbound.maxResponseBytes,
        overflow: "truncate",
        label: "callback",
        timeoutMs: outbound.timeoutMs,
      });
      const ok = res.status >= 200 && res.status < 300;
      return {
        statusCode: res.status,
        durationMs: elapsed(),
        error: ok ? null : `HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`,
        refused: false,
        responseBytes: res.bytes,
        responseExcerpt: res.body ? res.body.slice(0, EXCERPT_CHARS) : null,
      };
    } catch (err) {
      const refused = err instanceof EgressError && err.refused;
      return { statusCode: null, durationMs: elapsed(), error: err instanceof Error ? err.message : String(err), refused, responseBytes: 0, responseExcerpt: null };
    }
  };
}
