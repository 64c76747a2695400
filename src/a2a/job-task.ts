import type { Message } from "@a2a-js/sdk";
import { jobPayloadText } from "../agent-jobs/start.js";
import { checkStorable } from "../chat/fields.js";
import { AppError } from "../errors/app-error.js";
import { jobPayload, storedRequest } from "./mapping.js";

/** a2a_tasks.context_id's length, and the idempotency record's key (the messageId). */
const MAX_ID = 255;

export interface JobTaskInput {
  /** The run's payload (`ctx.payload`), under the webhook's limits. */
  payloadText: string;
  /** The client's contextId, or undefined for a new one. */
  contextId: string | undefined;
  /** The message as the task record keeps it (mapping.ts `storedRequest`). */
  request: Record<string, unknown>;
}

/**
 * Everything an automation agent's message stores, checked before its job starts: the job runs
 * and bills once started, and its task record is written right after it, so that write must not
 * be able to fail on the client's input (a job nobody can see, a `messageId` that fails again).
 * The payload is held to the webhook's limits (1 MB, depth); the record's contextId to its
 * column, its text to what PostgreSQL stores (no NUL, no lone surrogate, in keys too), its size
 * and depth to the payload's. Each refusal is a 4xx AppError naming the field (Invalid params).
 */
export function jobTaskInput(m: Message): JobTaskInput {
  for (const [name, value] of [["messageId", m.messageId], ["contextId", m.contextId]] as const) {
    if (value.length > MAX_ID) throw new AppError("validation_failed", `message.${name} may be at most ${MAX_ID} characters`, { param: `message.${name}` });
  }
  const payloadText = jobPayloadText(jobPayload(m), "message.parts");
  const request = storedRequest(m, false);
  checkStorable({ message: request });
  // The record's copy of the message (its metadata, extensions, references) under the same limits.
  jobPayloadText(request, "message");
  return { payloadText, contextId: m.contextId || undefined, request };
}
