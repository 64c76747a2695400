import type express from "express";
import { AppError } from "../errors/app-error.js";

/**
 * The route reads a POST's JSON-RPC body itself, once the key from the headers passed the (cached)
 * check, to know what is asked: a `chat` call may keep the cached key (its turn re-checks the key
 * in SQL, auth.ts), anything else is checked again fresh. The
 * transport still judges the body with its own rules (406, 415, 413, -32700) in its own order:
 * it gets the parsed message when the bytes are JSON, and otherwise the very bytes read
 * (`rawBody`, which the SDK's Node adapter reads instead of the consumed stream).
 */
export interface McpBody {
  /** The JSON value of the body, when it is one and within the size limit. */
  parsed?: unknown;
  /** Larger than the limit (announced, or read past it). */
  tooLarge: boolean;
}

const decoder = new TextDecoder();

export async function readMcpBody(req: express.Request, maxBytes: number): Promise<McpBody> {
  // Announced too large: the transport refuses it from the header, without reading a byte.
  if (Number(req.get("content-length")) > maxBytes) return { tooLarge: true };
  const raw = await readUpTo(req, maxBytes);
  (req as express.Request & { rawBody?: Buffer }).rawBody = raw;
  if (raw.length > maxBytes) return { tooLarge: true };
  try {
    // Decoded as the transport decodes (a byte-order mark is dropped, bad bytes become U+FFFD).
    return { parsed: JSON.parse(decoder.decode(raw)) as unknown, tooLarge: false };
  } catch {
    return { tooLarge: false };
  }
}

/** A `tools/call` of `chat` (one message: a batch is judged message by message by the key check's default). */
export function isChatCall(message: unknown): boolean {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const { method, params } = message as { method?: unknown; params?: unknown };
  return method === "tools/call" && typeof params === "object" && params !== null && (params as { name?: unknown }).name === "chat";
}

/** The body's bytes, or its first maxBytes + 1 (then the rest stays unread, as the transport leaves it). */
function readUpTo(req: express.Request, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: unknown) => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (err) reject(err instanceof AppError ? err : new AppError("invalid_request_error", "The request body could not be read"));
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        finish();
      }
    };
    const onEnd = () => finish();
    const onError = (err: unknown) => finish(err ?? new Error("request error"));
    const onClose = () => finish(new Error("request closed before its end"));
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}
