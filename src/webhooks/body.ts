import type { Request } from "express";
import { AppError } from "../errors/app-error.js";
import { jsonTooDeep, MAX_JSON_DEPTH } from "../infra/json.js";

/** 1 MB: the documented maximum webhook body. */
export const MAX_BODY_BYTES = 1_048_576;
/** After a 413 the rest of the body is discarded; a sender that keeps going past this is cut off. */
const DRAIN_LIMIT = 16 * 1_048_576;

export const tooLarge = () => new AppError("payload_too_large", `Request body exceeds ${MAX_BODY_BYTES} bytes`);

/** `application/json` or `application/<x>+json`, charset utf-8 if any; multipart and the rest are refused. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const [type, ...params] = value.split(";").map((s) => s.trim().toLowerCase());
  if (type !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(type ?? "")) return false;
  return params.every((p) => !p.startsWith("charset=") || /^charset="?utf-8"?$/.test(p));
}

/** Discards what is left of a request body without buffering it. */
export function drain(req: Request): void {
  let seen = 0;
  req.on("data", (c: Buffer) => {
    seen += c.length;
    if (seen > DRAIN_LIMIT) req.socket.destroy();
  });
  req.resume();
}

/** Reads the raw body, failing with 413 as soon as it passes `limit` (chunked bodies included). */
export function readRawBody(req: Request, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settled = true;
        cleanup();
        drain(req);
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(new AppError("invalid_request_error", "Request body could not be read", { cause: err }));
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/** Refuses bodies nested deeper than MAX_JSON_DEPTH with 400 invalid_json. */
export function checkJsonDepth(text: string): void {
  if (jsonTooDeep(text)) {
    throw new AppError("invalid_json", `JSON nests arrays/objects deeper than ${MAX_JSON_DEPTH} levels`, { details: { max_depth: MAX_JSON_DEPTH } });
  }
}
