import { errors, type AdapterPayload } from "oidc-provider";
import type { Config } from "../config/config.js";
import { createConnector, EgressError } from "../egress/connect.js";

/**
 * Client ID Metadata Documents: a `client_id` that is an HTTPS URL is the client's metadata,
 * fetched from that URL under the egress rules (src/egress: no private addresses; `http://` only
 * to loopback and only with EGRESS_ALLOW_PRIVATE, for tests), bounded in size and time, and
 * cached (its Cache-Control max-age, clamped to 1 min .. 1 day). The document must name itself as
 * `client_id` and be a public client (no secret).
 */
const MAX_BYTES = 16 * 1024;
const TIMEOUT_MS = 5_000;
const MIN_CACHE_MS = 60_000;
const MAX_CACHE_MS = 86_400_000;
const MAX_ENTRIES = 1000;

export interface ClientDocuments {
  resolve(id: string): Promise<AdapterPayload | undefined>;
}

const invalid = (why: string) => new errors.InvalidClient(`client_id metadata document refused: ${why}`);

export function createClientDocuments(config: Config): ClientDocuments {
  const connector = createConnector(config.egress);
  const cache = new Map<string, { payload: AdapterPayload; until: number }>();
  const pending = new Map<string, Promise<AdapterPayload>>();

  async function fetchDocument(id: string, url: URL): Promise<AdapterPayload> {
    let res;
    try {
      res = await connector.once(url, {
        method: "GET",
        headers: { accept: "application/json", "user-agent": "agent-gateway" },
        body: undefined,
        deadline: Date.now() + TIMEOUT_MS,
        maxResponseBytes: MAX_BYTES,
        overflow: "fail",
        label: "client_id metadata document",
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      throw invalid(err instanceof EgressError ? err.message : "could not be fetched");
    }
    if (res.status !== 200) throw invalid(`its URL answered ${res.status}`);
    let doc: unknown;
    try {
      doc = JSON.parse(res.body);
    } catch {
      throw invalid("not JSON");
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw invalid("not a JSON object");
    const d = doc as Record<string, unknown>;
    if (d.client_id !== id) throw invalid("its client_id is not its own URL");
    if ("client_secret" in d || "client_secret_expires_at" in d) throw invalid("a document must not carry a client secret");
    if (d.token_endpoint_auth_method !== undefined && d.token_endpoint_auth_method !== "none") throw invalid("token_endpoint_auth_method must be none");
    const maxAge = /max-age=(\d+)/i.exec(res.headers["cache-control"] ?? "")?.[1];
    const ttl = Math.min(MAX_CACHE_MS, Math.max(MIN_CACHE_MS, maxAge ? Number(maxAge) * 1000 : MIN_CACHE_MS));
    const payload = { ...d, client_id: id, token_endpoint_auth_method: "none" } as AdapterPayload;
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(id, { payload, until: Date.now() + ttl });
    return payload;
  }

  return {
    async resolve(id) {
      const url = URL.parse(id);
      if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return undefined;
      if (url.username || url.password || url.hash || id.includes("#") || url.pathname === "/") throw invalid("the URL must have a path and no credentials or fragment");
      if (url.protocol === "http:" && !connector.allowsPlainHttp) throw invalid("only https:// client_id URLs are accepted");
      const hit = cache.get(id);
      if (hit && hit.until > Date.now()) return hit.payload;
      let request = pending.get(id);
      if (!request) {
        request = fetchDocument(id, url).finally(() => pending.delete(id));
        pending.set(id, request);
      }
      return request;
    },
  };
}
