import type { Request } from "express";
import { AppError } from "../errors/app-error.js";

/** 1 MB: the documented maximum webhook body. */
export const MAX_BODY_BYTES = 1_048_576;
/** After a 413 the rest of the body is discarded; a sender that keeps going past this is cut off. */
const DRAIN_LIMIT = 16 * 1_048_576;

/**
 * Deepest nesting of arrays and objects a webhook body may have. Real payloads stay far below it;
 * deeper ones would only exercise recursion limits on their way through storage, the sandbox and
 * serialization.
 */
export const MAX_JSON_DEPTH = 128;

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

/**
 * Refuses bodies nested deeper than MAX_JSON_DEPTH with 400 invalid_json. One pass over the text,
 * no recursion (brackets inside strings do not count); malformed JSON is left to JSON.parse.
 */
export function checkJsonDepth(text: string, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) throw new AppError("invalid_json", `Request body nests arrays/objects deeper than ${max} levels`, { details: { max_depth: max } });
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}
