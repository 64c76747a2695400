import express, { type Request, type Response } from "express";
import { AppError } from "../errors/app-error.js";
import { sendError } from "../errors/http.js";
import type { RouteModule } from "../http/server.js";
import type { Runtime } from "../runtime/runtime.js";
import { clock } from "../triggers/clock.js";
import { validSecrets } from "../triggers/service.js";
import { authenticateWebhook } from "./auth.js";
import { drain, isJsonContentType, MAX_BODY_BYTES, readRawBody, tooLarge } from "./body.js";
import { ingest } from "./accept.js";
import { webhookServices } from "./services.js";
import { ensureJobEvents } from "../triggers/live.js";

/** A request counts as TLS when it arrived over TLS, or a trusted proxy says so (`trust proxy`). */
export function requireHttps(runtime: Runtime, req: Request): void {
  if (!runtime.config.allowInsecureHttp && !req.secure) {
    throw new AppError("https_required", "Webhook and job endpoints require HTTPS");
  }
}

function headerValue(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * POST /api/triggers/:id/webhook (DESIGN.md §6). Order of checks: transport, media type and
 * declared size (before reading anything), trigger, body (size enforced while streaming),
 * credentials over the raw bytes, JSON, then the durable write.
 */
export const webhookRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  const services = webhookServices(runtime);
  ensureJobEvents(runtime); // LISTEN before the first subscriber, so no early transition is missed

  router.post("/api/triggers/:id/webhook", async (req: Request, res: Response) => {
    try {
      requireHttps(runtime, req);
      if (!isJsonContentType(headerValue(req, "content-type"))) {
        throw new AppError("unsupported_media_type", "Content-Type must be application/json");
      }
      const encoding = headerValue(req, "content-encoding");
      if (encoding && encoding.toLowerCase() !== "identity") {
        throw new AppError("unsupported_media_type", "Compressed request bodies are not accepted");
      }
      const declared = headerValue(req, "content-length");
      if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();

      const id = String(req.params.id);
      const trigger = await services.cache.get(id);
      if (!trigger) throw new AppError("trigger_not_found", `Trigger ${id} not found`);
      if (!trigger.active) throw new AppError("trigger_inactive", "This trigger is inactive");

      const raw = await readRawBody(req);
      if (trigger.secretRequired) {
        const now = clock.now();
        const ok = authenticateWebhook(req.headers, raw, { secrets: validSecrets(trigger.secrets, now), now, relaxTimestamp: trigger.relaxTimestamp });
        if (!ok) throw new AppError("invalid_credentials", "Missing or invalid trigger secret or signature");
      }
      const text = raw.toString("utf8");
      try {
        JSON.parse(text);
      } catch {
        throw new AppError("invalid_json", "Request body is not valid JSON");
      }
      const key = headerValue(req, "idempotency-key") ?? headerValue(req, "webhook-id") ?? null;
      const accepted = await ingest(runtime, trigger, text, key);
      res.status(202).json({ job_id: accepted.jobId, status: accepted.status });
    } catch (err) {
      // Whatever was not read of the body is discarded, so the response is not stuck behind it.
      if (!req.readableEnded) drain(req);
      if (err instanceof AppError) return sendError(req, res, err);
      throw err;
    }
  });
  return router;
};
