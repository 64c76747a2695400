import { z } from "zod";
import type { KeyPrincipal } from "../keys/auth.js";
import type { ToolResult } from "./tool-result.js";
import type { TaskHandle } from "./task-shape.js";

/**
 * A tool as both MCP eras serve it: its name, descriptions, schemas and behaviour, with no SDK in
 * it. The initialize era's server (server.ts, SDK v1) and the 2026-07-28 era's (modern-server.ts,
 * SDK v2) each register the same specs, so the two eras cannot drift apart.
 */

/** What a tool call knows of its request, whichever SDK carried it. */
export interface ToolCall {
  /** The key the request came with (auth.ts `callerOf`). */
  principal: KeyPrincipal;
  /** Aborted when the client leaves (or cancels the request). */
  signal: AbortSignal;
  /** One `notifications/progress`, when the request carried a progress token; otherwise absent. */
  progress?: (progress: number, message: string) => Promise<void>;
  /** The request declared the Tasks extension (2026-07-28 only): a `run` not done in time may answer as a task. */
  tasks?: boolean;
  /** 2026-07-28 only: what the request carries for a multi-round-trip ask (ask-round.ts). */
  rounds?: InputRounds;
}

/** A `notifications/progress` in the shape both MCP eras send it. */
export interface ProgressNotification {
  method: "notifications/progress";
  params: { progressToken: string | number; progress: number; message: string };
}

/**
 * A call's `progress` for its token. Made here and returned (never a function literal written
 * into `call.progress`, which V8 would allocate in the old generation with the request's scope).
 */
export function progressOf(notify: (n: ProgressNotification) => Promise<void>, progressToken: string | number): NonNullable<ToolCall["progress"]> {
  return (progress, message) => notify({ method: "notifications/progress", params: { progressToken, progress, message } });
}

/** A 2026-07-28 request's multi-round-trip material: whether the client can be asked, and its answers. */
export interface InputRounds {
  /** The client declared form elicitation in its per-request capabilities. */
  elicits: boolean;
  /** A retry's answers, keyed by the ids of the input requests (untrusted, as sent). */
  responses?: Record<string, unknown>;
  /** A retry's echo of the state the server minted (untrusted: a job id, checked against the caller). */
  requestState?: string;
}

/** A 2026-07-28 InputRequiredResult: the client fulfils the input requests and retries the call. */
export interface InputRequired {
  [key: string]: unknown;
  resultType: "input_required";
  inputRequests: Record<string, unknown>;
  requestState: string;
}

export type ToolAnswer = ToolResult | TaskHandle | InputRequired;

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  input: z.ZodRawShape;
  output: z.ZodRawShape;
  annotations: ToolAnnotations;
  /** The arguments arrive validated against `input` (by the SDK, or by tasks.ts). */
  call: (args: Record<string, unknown>, call: ToolCall) => Promise<ToolAnswer>;
}

/** A spec whose handler sees its arguments typed from its input schema. */
export function defineTool<S extends z.ZodRawShape>(
  spec: Omit<ToolSpec, "input" | "call"> & { input: S; call: (args: z.infer<z.ZodObject<S>>, call: ToolCall) => Promise<ToolAnswer> },
): ToolSpec {
  return spec as unknown as ToolSpec;
}

/** A task handle or an input request: answers only a 2026-07-28 request that allows them gets. */
export const isDeferred = (r: ToolAnswer): r is TaskHandle | InputRequired => {
  const type = (r as { resultType?: unknown }).resultType;
  return type === "task" || type === "input_required";
};

/**
 * One `z.object` per shape for the life of the process: the 2026-07-28 era builds a server per
 * request, and a new zod object compiles its parser again on first use (most of that era's CPU
 * per call, profiled). The shapes are module constants, so this holds a handful of entries.
 */
const objects = new WeakMap<z.ZodRawShape, z.ZodObject>();
export function objectSchema(shape: z.ZodRawShape): z.ZodObject {
  let schema = objects.get(shape);
  if (!schema) objects.set(shape, (schema = z.object(shape)));
  return schema;
}
