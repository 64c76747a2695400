import { createECDH, createHash, hkdfSync } from "node:crypto";
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import type { Runtime } from "../runtime/runtime.js";
import { pgAdapterFactory } from "./adapter.js";
import { createClientDocuments } from "./client-documents.js";
import { agentOfResource, OAUTH_SCOPE } from "./resources.js";
import { renderErrorPage } from "./pages.js";

/**
 * The OAuth 2.1 authorization server (docs/design/oauth.md) is oidc-provider, configured here and nowhere
 * else: codes, PKCE, tokens, rotation, replay detection, registration and revocation are the
 * library's. Ours: the PostgreSQL adapter (adapter.ts), the sign-in and consent pages
 * (interactions.ts), and which resources exist (an agent's MCP or A2A URL, resources.ts).
 * The issuer is PUBLIC_BASE_URL, read when the first OAuth request arrives (the API may learn its
 * port only when it binds).
 */

export const OAUTH_ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  jwks: "/oauth/jwks",
  userinfo: "/oauth/userinfo",
  end_session: "/oauth/logout",
  introspection: "/oauth/introspect",
} as const;

export const INTERACTION_PATH = "/oauth/interaction";

export const ACCESS_TOKEN_TTL_S = 3600;
const REFRESH_TTL_S = 30 * 24 * 3600;

/** Secrets every instance derives alike from SECRET_ENCRYPTION_KEY (cookie keys, the signing key). */
function derived(secret: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `agent-gateway oauth ${label}`, 32));
}

/** The ES256 key for ID tokens, the same on every instance. */
function signingJwk(secret: Buffer) {
  const d = derived(secret, "es256");
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(d);
  const pub = ecdh.getPublicKey(undefined, "uncompressed");
  const b64 = (b: Buffer) => b.toString("base64url");
  const x = pub.subarray(1, 33);
  const y = pub.subarray(33, 65);
  const kid = createHash("sha256").update(pub).digest("base64url").slice(0, 16);
  return { kty: "EC", crv: "P-256", d: b64(d), x: b64(x), y: b64(y), use: "sig", alg: "ES256", kid };
}

export function createProvider(runtime: Runtime): Provider {
  const { config } = runtime;
  const issuer = config.publicBaseUrl;
  const documents = createClientDocuments(config);
  const configuration: Configuration = {
    adapter: pgAdapterFactory({ runtime, resolveClientUrl: (id) => documents.resolve(id) }),
    clients: [],
    clientDefaults: { grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none", id_token_signed_response_alg: "ES256" },
    responseTypes: ["code"],
    scopes: ["openid", "offline_access", OAUTH_SCOPE],
    claims: { openid: ["sub"] },
    pkce: { required: () => true },
    routes: OAUTH_ROUTES,
    cookies: { keys: [derived(config.secretEncryptionKey, "cookies").toString("base64url")] },
    jwks: { keys: [signingJwk(config.secretEncryptionKey)] },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TTL_S,
      Grant: REFRESH_TTL_S,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      IdToken: 3600,
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      // A client revokes its own tokens only (RFC 7009 §2.1).
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // RFC 8707 is required here: the authorization request names one agent's MCP or A2A URL.
        defaultResource: (ctx: KoaContextWithOIDC, _client, oneOf?: readonly string[]) => {
          if (oneOf?.length) return oneOf[0];
          if (ctx.oidc.route === "authorization") throw new errors.InvalidTarget(`resource is required: an agent's MCP URL (${issuer}/api/mcp/<agent_id>) or A2A URL`);
          return undefined;
        },
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!agentOfResource(issuer, resource)) throw new errors.InvalidTarget(`resource must be an agent's MCP URL (${issuer}/api/mcp/<agent_id>) or A2A URL (${issuer}/api/a2a/<agent_id>)`);
          return { scope: OAUTH_SCOPE, audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL_S, accessTokenFormat: "opaque" };
        },
      },
    },
    discovery: { client_id_metadata_document_supported: true },
    clientBasedCORS: () => true,
    renderError: (ctx, out) => {
      ctx.type = "html";
      ctx.body = renderErrorPage(out.error ?? "error", out.error_description ?? "");
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = config.trustProxy !== false;
  allowLoopbackPorts(provider);
  // Through our logger, never the request (tokens, codes and admin tokens travel in it).
  provider.on("server_error", (_ctx: unknown, err: Error) => runtime.log.error({ err: { name: err.name, message: err.message } }, "OAuth server error"));
  return provider;
}

/**
 * Redirect URIs match exactly, except the port of a loopback one (RFC 8252 §7.3): oidc-provider
 * grants that to `native` clients only; a client that registered `http://127.0.0.1/...` is one
 * whatever its `application_type` says.
 */
function allowLoopbackPorts(provider: Provider): void {
  const proto = provider.Client.prototype as { redirectUriAllowed(uri: string): boolean; redirectUris?: string[] };
  const exact = proto.redirectUriAllowed;
  // Once per process (lint:closures).
  proto.redirectUriAllowed = function (this: typeof proto, uri: string): boolean {
    if (exact.call(this, uri)) return true;
    const strip = (u: string) => {
      const url = URL.parse(u);
      if (!url || url.protocol !== "http:" || !["127.0.0.1", "[::1]"].includes(url.hostname)) return undefined;
      url.port = "";
      return url.href;
    };
    const given = strip(uri);
    return given !== undefined && (this.redirectUris ?? []).some((r) => strip(r) === given);
  };
}
