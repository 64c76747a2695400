import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ClientRequestSchema, ErrorCode, isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";

/**
 * A request of a known method whose params break the protocol's schema (say `initialize` with an
 * array for `capabilities`) is answered with JSON-RPC -32602 Invalid params, checked with the SDK's
 * own request schemas. Without this the SDK's dispatcher answers -32603 Internal error with the
 * validation issues as its message: the client's mistake reported as ours.
 */
const SCHEMAS = new Map(ClientRequestSchema.options.map((schema) => [schema.shape.method.value as string, schema]));
const MAX_MESSAGE = 500;

export function answerInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("answerInvalidParams: connect the server to the transport first");
  transport.onmessage = (message, extra) => {
    const parsed = isJSONRPCRequest(message) ? SCHEMAS.get(message.method)?.safeParse(message) : undefined;
    if (!parsed || parsed.success || !isJSONRPCRequest(message)) return deliver(message, extra);
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(request)"}: ${i.message}`).join("; ");
    void transport.send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${issues}`.slice(0, MAX_MESSAGE) } }).catch(() => {});
  };
}
