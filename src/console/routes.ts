import { existsSync } from "node:fs";
import { join } from "node:path";
import express, { type Router } from "express";
import type { RouteModule } from "../http/server.js";
import { consoleDistDir } from "./paths.js";

/** Paths that belong to the API; the console never answers them (they keep their JSON 404s). */
const RESERVED = /^\/(api|graphql|healthz|readyz|metrics)(\/|$)/;

/**
 * The web console: the Vite build in dist/web at `/`, with an SPA fallback to index.html for
 * browser navigations (GET/HEAD that accept HTML) outside the API's paths. Mounted last.
 */
export const consoleRoutes: RouteModule = () => {
  const router = express.Router();
  const dir = consoleDistDir();
  const index = join(dir, "index.html");
  // Hashed assets can be cached for good; index.html must always be revalidated.
  router.use(
    "/assets",
    express.static(join(dir, "assets"), { index: false, immutable: true, maxAge: "365d" }),
  );
  router.use((req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || RESERVED.test(req.path)) return next();
    // Browser navigations ask for text/html explicitly; API clients (Accept: */* or JSON) keep their 404s.
    if (req.path !== "/" && !String(req.headers.accept ?? "").includes("text/html")) return next();
    if (/\.[A-Za-z0-9]+$/.test(req.path) && req.path !== "/index.html") return next(); // a missing file stays a 404
    if (!existsSync(index)) {
      res
        .status(503)
        .type("text/plain")
        .send("The web console is not built yet. Run `npm run build:web` (npm start and npm run build do it for you).\n");
      return;
    }
    res.setHeader("cache-control", "no-cache");
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("referrer-policy", "no-referrer");
    res.setHeader("x-frame-options", "DENY");
    res.sendFile(index);
  });
  return router;
};
