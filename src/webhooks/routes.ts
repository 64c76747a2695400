import express, { type Request, type Response } from "express";
import { relaxesSignatureTimestamp } from "../accounts/service.js";
import { AppError } from "../errors/app-error.js";
import { sendError } from "../errors/http.js";
import { headerValue, requireHttps } from "../http/auth.js";
import type { RouteModule } from "../http/server.js";
import { ensureJobEvents } from "../jobs/events.js";
import type { Runtime } from "../runtime/runtime.js";
import { triggerCache, type CachedTrigger } from "../triggers/cache.js";
import { clock } from "../triggers/clock.js";
import { validSecrets } from "../triggers/secrets.js";
import { acceptWebhook } from "./accept.js";
import { webhookServices } from "./services.js";
import { DENIAL_MESSAGES, verifyWebhook } from "./auth.js";
import { checkJsonDepth, drain, isJsonContentType, MAX_BODY_BYTES, readRawBody, tooLarge } from "./body.js";

/** Throws 401 unless the request authenticates; returns the signed delivery key, if a signature did. */
async function authenticate(runtime: Runtime, req: Request, trigger: CachedTrigger, raw: Buffer): Promise<string | null> {
  const now = clock.now();
  const { auth, deliveryKey, reason } = verifyWebhook(req.headers, raw, { secrets: validSecrets(trigger.secrets, now), now });
  // The account setting is read at request time: a change applies to the very next request on every instance.
  if (auth === "ok" || (auth === "needs-relaxed-timestamp" && (await relaxesSignatureTimestamp(runtime.pool, trigger.accountId)))) return deliveryKey;
  const why = reason ?? "timestamp_required";
  throw new AppError("invalid_credentials", DENIAL_MESSAGES[why], { details: { reason: why } });
}

/**
 * POST /api/triggers/:id/webhook (docs/guides/webhooks.md). Order of checks: transport, media type and
 * declared size (before reading anything), trigger, body (size enforced while streaming),
 * credentials over the raw bytes, then whether the trigger is active (after authentication, so
 * only its owner's senders learn it), JSON and its nesting depth, then the durable write.
 */
export const webhookRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  const cache = triggerCache(runtime);
  ensureJobEvents(runtime); // LISTEN before the first subscriber, so no early transition is missed
  // The dispatcher starts with the API, not with its first webhook: a backlog committed by an
  // instance that died before starting it is swept now, even if no webhook ever arrives here.
  webhookServices(runtime);

  router.post("/api/triggers/:id/webhook", async (req: Request, res: Response) => {
    try {
      requireHttps(runtime.config.allowInsecureHttp, req);
      if (!isJsonContentType(headerValue(req.headers, "content-type"))) {
        throw new AppError("unsupported_media_type", "Content-Type must be application/json");
      }
      const encoding = headerValue(req.headers, "content-encoding");
      if (encoding && encoding.toLowerCase() !== "identity") {
        throw new AppError("unsupported_media_type", "Compressed request bodies are not accepted");
      }
      const declared = headerValue(req.headers, "content-length");
      if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();

      const id = String(req.params.id);
      const trigger = await cache.get(id);
      if (!trigger) throw new AppError("trigger_not_found", `Trigger ${id} not found`);

      const raw = await readRawBody(req);
      const signedKey = trigger.secretRequired ? await authenticate(runtime, req, trigger, raw) : null;
      if (!trigger.active) throw new AppError("trigger_inactive", "This trigger is inactive");
      const text = raw.toString("utf8");
      checkJsonDepth(text);
      try {
        JSON.parse(text);
      } catch {
        throw new AppError("invalid_json", "Request body is not valid JSON");
      }
      // A signed delivery key wins over the unsigned Idempotency-Key: a replay of a captured
      // request with a fresh key is still the same delivery (one job, no new model spend).
      const key = signedKey ?? headerValue(req.headers, "idempotency-key") ?? headerValue(req.headers, "webhook-id") ?? null;
      const accepted = await acceptWebhook(runtime, trigger, text, key);
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
