import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ClientRequestSchema, ErrorCode, isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * A request of a known method whose params break the protocol's schema (say `initialize` with an
 * array for `capabilities`) is answered with JSON-RPC -32602 Invalid params, checked with the SDK's
 * own request schemas. Without this the SDK's dispatcher answers -32603 Internal error with the
 * validation issues as its message: the client's mistake reported as ours.
 */
const SCHEMAS = new Map(ClientRequestSchema.options.map((schema) => [schema.shape.method.value as string, schema]));
const MAX_MESSAGE = 500;

/** The -32602 answer to a request whose params break its method's schema, else undefined. */
function invalidParamsError(request: { id: string | number; method: string }): JSONRPCMessage | undefined {
  const parsed = SCHEMAS.get(request.method)?.safeParse(request);
  if (!parsed || parsed.success) return undefined;
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(request)"}: ${i.message}`).join("; ");
  return { jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${request.method}: ${issues}`.slice(0, MAX_MESSAGE) } };
}

/**
 * The answer to send instead of the SDK's, when it is -32603 for params that break the schema
 * (checked only then: a valid call costs no second validation).
 */
export function invalidParamsAnswer(request: { id: string | number; method: string }, answer: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!("error" in answer) || answer.error.code !== ErrorCode.InternalError) return undefined;
  return invalidParamsError(request);
}

/** The same for the SDK's own transport (automation agents), checked before the server sees the request. */
export function answerInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("answerInvalidParams: connect the server to the transport first");
  // Named first: a function literal written straight into `transport.onmessage` would be
  // allocated in the old generation with this request's scope (a2a/rate-limit-headers.ts).
  const onmessage: typeof deliver = (message, extra) => {
    const invalid = isJSONRPCRequest(message) ? invalidParamsError(message) : undefined;
    if (!invalid) return deliver(message, extra);
    void transport.send(invalid).catch(() => {});
  };
  transport.onmessage = onmessage;
}
