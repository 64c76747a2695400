import { createHash } from "node:crypto";
import express, { type Router } from "express";
// Imported (not read from disk) so that tsc copies the document into dist/ with the code.
import document from "./openapi.json" with { type: "json" };

/**
 * The OpenAPI 3.1 description of the REST routes (the source is `openapi.json` beside this file,
 * linted by `npm run lint`, checked against the live routes by test/openapi.test.ts). Served at
 * `GET /openapi.json` with no credentials: it describes the surface, not anyone's data.
 */
export const OPENAPI_DOCUMENT: Readonly<Record<string, unknown>> = document;

const body = JSON.stringify(document);
const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;

export function openApiRoute(): Router {
  const router = express.Router();
  router.get("/openapi.json", (req, res) => {
    res.setHeader("ETag", etag);
    res.setHeader("Cache-Control", "public, max-age=300");
    if (req.get("if-none-match") === etag) {
      res.status(304).end();
      return;
    }
    res.type("application/json").send(body);
  });
  return router;
}
