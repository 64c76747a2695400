import { AppError } from "../errors/app-error.js";
import { unavailableError } from "../errors/unavailable.js";
import { unstorableTextError } from "../errors/unstorable.js";
import type { Logger } from "../infra/logger.js";

/**
 * What a tool returns. A refusal of the service (402, 429, thread_busy, a failed job, an unknown
 * job) is a tool result with `isError: true` that the model can read and act on, per the MCP
 * specification; only protocol problems are JSON-RPC errors (the SDK raises those).
 *
 * Our own shape rather than an SDK's `CallToolResult`: the same results go out through both MCP
 * SDKs (the 2026-07-28 era's and the initialize era's), and this is the part both accept.
 */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function toolSuccess(text: string, structured: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

export function toolError(text: string, structured?: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text }], isError: true, ...(structured ? { structuredContent: structured } : {}) };
}

/** An error thrown by a service, as the tool's result: code and message, and when to retry. */
export function toolErrorFrom(err: unknown, log: Logger): ToolResult {
  const known = err instanceof AppError ? err : (unstorableTextError(err) ?? unavailableError(err));
  if (!known) {
    log.error({ err }, "an MCP tool failed");
    return toolError("internal_error: the tool failed unexpectedly; try again later");
  }
  const retryAfter = known.headers["Retry-After"] ?? known.headers["retry-after"];
  const param = known.param ? ` (${known.param})` : "";
  const text = `${known.code}: ${known.message}${param}${retryAfter ? `; retry after ${retryAfter} s` : ""}`;
  // No structuredContent: clients check it against the tool's output schema even on errors.
  return toolError(text);
}
