import express, { type Request, type Response } from "express";
import { AppError } from "../errors/app-error.js";
import { sendError } from "../errors/http.js";
import { requireHttps } from "../http/auth.js";
import type { RouteModule } from "../http/server.js";
import { answerByToken } from "./answer.js";
import { MAX_ANSWER_BYTES } from "./schema.js";

/** The body, read up to MAX_ANSWER_BYTES (more: 413, without reading the rest), parsed as JSON. */
async function readJson(req: Request): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? 0);
  const tooLarge = () => new AppError("payload_too_large", `The answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  if (declared > MAX_ANSWER_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_ANSWER_BYTES) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError("invalid_json", "The body must be the answer as a JSON value");
  }
}

/**
 * `POST /api/input-requests/<id>/answer?token=…` (the `answer_url` of docs/design/input-requests.md): the body is
 * the answer. The token is the only credential; 200 once, then 409 input_already_answered; an
 * unknown id or a wrong token 404 input_request_not_found; an expired or closed question 410
 * input_request_expired; an invalid value 400 validation_failed (the question stays open).
 */
export const inputRequestRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  router.post("/api/input-requests/:id/answer", async (req: Request, res: Response) => {
    try {
      requireHttps(runtime.config.allowInsecureHttp, req);
      const token = typeof req.query.token === "string" ? req.query.token : "";
      const value = await readJson(req);
      const jobId = await answerByToken(runtime, String(req.params.id), token, value);
      res.json({ input_request_id: String(req.params.id), job_id: jobId, status: "answered" });
    } catch (err) {
      if (err instanceof AppError) return sendError(req, res, err);
      throw err;
    }
  });
  return router;
};
