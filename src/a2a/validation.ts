import { Role, type Message, type SendMessageRequest } from "@a2a-js/sdk";
import { AppError } from "../errors/app-error.js";

/**
 * The checks of a request's own fields the SDK's decoding leaves to the server: it fills what is
 * missing with proto3 defaults (a role of ROLE_UNSPECIFIED) and passes timestamps on as strings.
 * Each refusal is a 400 AppError naming the field (Invalid params, -32602).
 */

/** A message's required fields (A2A §4.1.4: messageId, role, parts). */
export function checkMessage(params: SendMessageRequest): Message {
  const m = params.message;
  if (!m) throw new AppError("validation_failed", "message is required", { param: "message" });
  if (!m.messageId) throw new AppError("validation_failed", "message.messageId is required", { param: "message.messageId" });
  if (m.role !== Role.ROLE_USER && m.role !== Role.ROLE_AGENT) throw new AppError("validation_failed", "message.role is required (ROLE_USER)", { param: "message.role" });
  if (m.parts.length === 0) throw new AppError("validation_failed", "message.parts must contain at least one part", { param: "message.parts" });
  checkHistoryLength(params.configuration?.historyLength, "configuration.historyLength");
  return m;
}

/** historyLength: absent, or 0 and more (0 is no history). */
export function checkHistoryLength(n: number | undefined, param = "historyLength"): void {
  if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new AppError("validation_failed", `${param} must be 0 or more`, { param });
}

/** A protobuf Timestamp in its JSON form: RFC 3339, UTC or with an offset. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

export function parseTimestamp(value: string | undefined, param: string): Date | undefined {
  if (!value) return undefined;
  const at = RFC3339.test(value) ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw new AppError("validation_failed", `${param} must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z`, { param });
  return at;
}

/** An id a client chooses (a contextId, a push config's id): what fits a column and reads back unchanged. */
const CLIENT_ID = /^[A-Za-z0-9._~:@+=\/-]+$/;
export const MAX_CLIENT_ID = 255;

/**
 * Checks an id the client chose: at most 255 characters, letters, digits and `._~:@+=/-` (no
 * spaces or control characters); `reserved` is a prefix of the gateway's own ids, refused so the
 * client's id never names one of them.
 */
export function checkClientId(value: string, param: string, reserved?: string): string {
  if (value.length > MAX_CLIENT_ID) throw new AppError("validation_failed", `${param} may be at most ${MAX_CLIENT_ID} characters`, { param });
  if (!CLIENT_ID.test(value)) throw new AppError("validation_failed", `${param} may hold only letters, digits and . _ ~ : @ + = / -`, { param });
  if (reserved && value.startsWith(reserved)) throw new AppError("validation_failed", `${param} may not start with ${reserved} (the gateway's own ids)`, { param });
  return value;
}
