import express, { type NextFunction, type Request, type Response } from "express";
import type Provider from "oidc-provider";
import type { RouteModule } from "../http/server.js";
import { a2aPath, mcpPath } from "../agents/protocol-urls.js";
import { AppError } from "../errors/app-error.js";
import { consumeRateLimit } from "../chat/rate-limit.js";
import { createProvider, OAUTH_ROUTES } from "./provider.js";
import { interactionRoutes } from "./interactions.js";
import { OAUTH_SCOPE, protectedResourceMetadata } from "./resources.js";
import { sweepOAuthModels } from "./adapter.js";

/**
 * The authorization server's HTTP surface (docs/design/oauth.md): oidc-provider's Koa app (`callback()`)
 * mounted under Express for `/oauth/*` and the metadata documents, our sign-in and consent pages,
 * the per-agent protected-resource metadata (RFC 9728) that the MCP and A2A 401 challenges point
 * at, and per-IP rate limits on registration and the token endpoint, counted in PostgreSQL like
 * every other limit (src/chat/rate-limit.ts) so all instances share them.
 */
const AS_METADATA = new Set(["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]);
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * An authorization request that asks for no scope gets the one scope there is (clients that do
 * not read `scopes_supported` would otherwise get a code for no access at all).
 */
function defaultScope(req: Request): void {
  const url = new URL(req.url, "http://x");
  if (url.searchParams.get("scope")) return;
  url.searchParams.set("scope", OAUTH_SCOPE);
  req.url = url.pathname + url.search;
}

export const oauthRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  let provider: Provider | undefined;
  let handler: ((req: Request, res: Response) => unknown) | undefined;
  const getProvider = () => (provider ??= createProvider(runtime));

  const resourceMetadata = (path: (id: string) => string, name: string) => (req: Request, res: Response) => {
    // Public documents: browser-based clients (an MCP inspector) read them across origins.
    res.set({ "Cache-Control": "public, max-age=3600", "Access-Control-Allow-Origin": "*" }).json(protectedResourceMetadata(runtime.config.publicBaseUrl, path(String(req.params.agentId)), name));
  };
  router.get("/.well-known/oauth-protected-resource/api/mcp/:agentId", resourceMetadata(mcpPath, "Agent Gateway agent (MCP)"));
  router.get("/.well-known/oauth-protected-resource/api/a2a/:agentId", resourceMetadata(a2aPath, "Agent Gateway agent (A2A)"));

  const limited = (name: string, perMinute: () => number) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      await consumeRateLimit(runtime.pool, `oauth-${name}:${req.ip ?? "unknown"}`, perMinute());
      next();
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 429) throw err;
      res.status(429).set(err.headers).set("cache-control", "no-store").json({ error: "rate_limit_exceeded", error_description: `Too many ${name} requests from this address; retry after ${err.headers["retry-after"]} s` });
    }
  };
  router.post(OAUTH_ROUTES.registration, limited("registration", () => runtime.config.oauth.registrationsPerMinute));
  router.post(OAUTH_ROUTES.token, limited("token", () => runtime.config.oauth.tokenRequestsPerMinute));

  router.use(interactionRoutes(runtime, getProvider));

  router.use((req, res, next) => {
    const path = req.path;
    if (AS_METADATA.has(path)) {
      if (req.method !== "GET" && req.method !== "HEAD" && req.method !== "OPTIONS") return next();
      req.url = "/.well-known/openid-configuration";
    } else if (!path.startsWith("/oauth/")) return next();
    else if (path === OAUTH_ROUTES.authorization && req.method === "GET") defaultScope(req);
    handler ??= getProvider().callback() as (req: Request, res: Response) => unknown;
    handler(req, res);
  });

  const sweep = setInterval(() => void sweepOAuthModels(runtime).catch((err) => runtime.log.warn({ err }, "could not sweep OAuth rows")), SWEEP_EVERY_MS);
  sweep.unref();
  return { router, close: () => clearInterval(sweep) };
};
