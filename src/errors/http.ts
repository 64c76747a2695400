import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { AppError } from "./app-error.js";
import { unavailableError } from "./unavailable.js";
import { unstorableTextError } from "./unstorable.js";

/** OpenAI's error `type` for each status, so official SDKs raise the matching typed error. */
function openAiType(err: AppError): string {
  switch (err.status) {
    case 400:
    case 404:
    case 409:
    case 413:
    case 415:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "insufficient_quota";
    case 403:
      return "permission_error";
    case 429:
      return "rate_limit_error";
    default:
      return err.status >= 500 && err.status < 600 && err.code !== "internal_error" ? "upstream_error" : "server_error";
  }
}

const isOpenAiSurface = (req: Request) => req.originalUrl.startsWith("/api/v1/") || req.originalUrl === "/api/v1";

export function errorBody(err: AppError, openAi: boolean): Record<string, unknown> {
  if (openAi) {
    return { error: { message: err.message, type: openAiType(err), code: err.code, param: err.param ?? null, ...err.details } };
  }
  return { error: { code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}), ...err.details } };
}

export function sendError(req: Request, res: Response, err: AppError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.status(err.status).json(errorBody(err, isOpenAiSurface(req)));
}

/** Body-parser and other middleware errors carry `status`/`type`; translate the ones clients cause. */
function fromMiddlewareError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; type?: string; message?: string };
  if (e?.type === "entity.parse.failed") return new AppError("invalid_json", "Request body is not valid JSON");
  if (e?.type === "entity.too.large") return new AppError("payload_too_large", "Request body is too large");
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported")
    return new AppError("unsupported_media_type", e.message ?? "Unsupported content encoding");
  if (e?.type === "request.aborted") return new AppError("invalid_request_error", "Request was aborted");
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500)
    return new AppError("invalid_request_error", "Malformed request");
  return undefined;
}

export function errorHandler(log: { error: (obj: object, msg: string) => void }): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const appError = fromMiddlewareError(err);
    if (appError) return sendError(req, res, appError);
    const known = unstorableTextError(err) ?? unavailableError(err);
    if (known) return sendError(req, res, known);
    log.error({ err }, "unhandled error");
    sendError(req, res, new AppError("internal_error", "Internal server error"));
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(req, res, new AppError("not_found", `No route for ${req.method} ${req.path}`));
};
