import fc from "fast-check";
import { jsonValue, oddString } from "./arbitraries.js";
import type { Answer } from "./envelope.js";

/**
 * Generated MCP traffic (Streamable HTTP, JSON-RPC 2.0): handshakes at any protocol version,
 * known and unknown methods, tool calls with hostile arguments, notifications, batches, malformed
 * JSON-RPC and huge bodies; and the check of what the MCP route may answer.
 */

const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28", "1999-01-01", ""];
export const protocolVersion = fc.oneof(fc.constantFrom(...VERSIONS), oddString);

const id = fc.oneof(fc.integer(), fc.constantFrom("a", ""), oddString, fc.constant(null));
/** The 2026-07-28 per-request envelope (whole, partial, or with odd values), which routes a request to that era. */
const envelope = fc.record(
  {
    "io.modelcontextprotocol/protocolVersion": protocolVersion,
    "io.modelcontextprotocol/clientInfo": fc.oneof(fc.constant({ name: "fuzz", version: "1" }), jsonValue),
    "io.modelcontextprotocol/clientCapabilities": fc.oneof(fc.constant({}), fc.constant({ extensions: { "io.modelcontextprotocol/tasks": {} } }), jsonValue),
    progressToken: fc.oneof(fc.integer(), oddString),
  },
  { requiredKeys: ["io.modelcontextprotocol/protocolVersion"] },
);
const meta = fc.oneof(fc.constant({ progressToken: 1 }), jsonValue, envelope);
const toolArgs = (jobIds: () => string[]) =>
  fc.oneof(
    fc.record({ message: fc.oneof(oddString, fc.constant("hi")), thread_id: fc.oneof(oddString, fc.constant("thr_nope")) }, { requiredKeys: [] }),
    fc.record(
      {
        input: jsonValue,
        wait_seconds: fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(0, 1, 291, -1), oddString),
        idempotency_key: fc.oneof(oddString, fc.constant("k")),
      },
      { requiredKeys: [] },
    ).map((a) => ("wait_seconds" in a && typeof a.wait_seconds === "number" ? { ...a, wait_seconds: Math.min(Math.abs(a.wait_seconds), 2) } : a)),
    fc.record({ job_id: fc.oneof(oddString, fc.constant("job_nope"), fc.nat().map((n) => jobIds()[n % Math.max(1, jobIds().length)] ?? "job_x")) }),
    jsonValue,
  );

export const rpcMessage = (jobIds: () => string[]) =>
  fc.oneof(
    fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constant("initialize"), params: fc.record({ protocolVersion, capabilities: fc.oneof(fc.constant({}), jsonValue), clientInfo: fc.oneof(fc.constant({ name: "fuzz", version: "1" }), jsonValue) }, { requiredKeys: [] }) }),
    fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constantFrom("tools/list", "ping", "server/discover", "resources/list", "prompts/list", "tasks/list", "logging/setLevel", "completion/complete"), params: fc.oneof(fc.constant(undefined), jsonValue, envelope.map((m) => ({ _meta: m }))) }),
    fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constantFrom("tasks/get", "tasks/cancel", "tasks/update"), params: fc.record({ taskId: fc.oneof(oddString, fc.constant("job_nope"), fc.nat().map((n) => jobIds()[n % Math.max(1, jobIds().length)] ?? "job_x")), inputResponses: jsonValue, _meta: meta }, { requiredKeys: [] }) }),
    fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constant("tools/call"), params: fc.record({ name: fc.oneof(fc.constantFrom("chat", "run", "get_job"), oddString), arguments: toolArgs(jobIds), _meta: meta }, { requiredKeys: ["name"] }) }),
    fc.record({ jsonrpc: fc.constant("2.0"), method: fc.oneof(fc.constantFrom("notifications/initialized", "notifications/cancelled", "notifications/progress"), oddString), params: jsonValue }, { requiredKeys: ["jsonrpc", "method"] }),
    fc.record({ jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("1.0"), oddString), id, method: oddString, params: jsonValue }, { requiredKeys: [] }),
    jsonValue,
  );

export const mcpBody = (jobIds: () => string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: rpcMessage(jobIds).map((m) => JSON.stringify(m) ?? "null") },
    { weight: 1, arbitrary: fc.array(rpcMessage(jobIds), { maxLength: 4 }).map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: oddString },
    { weight: 1, arbitrary: fc.constantFrom("{", '{"jsonrpc":"2.0"', "[]", "[[[[", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":' + "[".repeat(5000) + "]".repeat(5000) + "}}") },
    // Huge arguments: around the 4 MB body limit of the route and the 1 MB limit of a run's input.
    {
      weight: 1,
      arbitrary: fc.record({ size: fc.constantFrom(1_100_000, 4 * 1024 * 1024 + 10), tool: fc.constantFrom("chat", "run") }).map(({ size, tool }) =>
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: tool === "chat" ? { message: "x".repeat(size) } : { input: { s: "x".repeat(size) }, wait_seconds: 0 } } }),
      ),
    },
  );

const STACK = /\n\s+at [^\n]*[(/\\][^\n]*:\d+:\d+|node_modules\/|\/src\/[a-z-]+\/[a-z-]+\.ts/;

/**
 * What the MCP route may answer: never a 5xx or a stack trace; HTTP errors as JSON with an error
 * object (JSON-RPC's numeric code from the transport, or the REST envelope's string code for 401
 * and 405); in an SSE answer, no JSON-RPC internal error (-32603) and no tool result that says the
 * tool itself failed.
 */
export function mcpProblemsOf(a: Answer): string[] {
  const p: string[] = [];
  if (a.status >= 500) p.push(`status ${a.status}`);
  if (STACK.test(a.body)) p.push("a stack trace or source path in the body");
  if (a.status >= 400) {
    let err: any;
    try {
      err = JSON.parse(a.body)?.error;
    } catch {
      p.push(`error body is not JSON (${a.contentType})`);
      return p;
    }
    if (!err || typeof err.message !== "string") p.push("error body has no error.message");
    if (typeof err?.code !== "string" && typeof err?.code !== "number") p.push("error.code is neither a JSON-RPC nor a REST code");
    return p;
  }
  const messages = /event-stream/.test(a.contentType)
    ? a.body
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .filter(Boolean)
    : a.body
      ? [a.body]
      : [];
  for (const text of messages) {
    let m: any;
    try {
      m = JSON.parse(text);
    } catch {
      p.push(`an SSE event is not JSON: ${text.slice(0, 100)}`);
      continue;
    }
    for (const one of Array.isArray(m) ? m : [m]) {
      if (one?.error?.code === -32603) p.push(`JSON-RPC internal error: ${String(one.error.message).slice(0, 200)}`);
      const content = one?.result?.isError ? JSON.stringify(one.result.content ?? "") : "";
      if (/internal_error/.test(content)) p.push(`a tool failed internally: ${content.slice(0, 200)}`);
    }
  }
  return p;
}

/** `Mcp-Method` and `Mcp-Name` as a 2026-07-28 client derives them from its body (printable ASCII only). */
export function standardHeaders(body: string | Uint8Array): Record<string, string> {
  let m: { method?: unknown; params?: { name?: unknown; taskId?: unknown } } | undefined;
  try {
    m = JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body)) as typeof m;
  } catch {
    return {};
  }
  const ascii = (v: unknown) => (typeof v === "string" ? v.replace(/[^\x20-\x7e]/g, "?") : undefined);
  const method = ascii(m?.method);
  const name = ascii(m?.params?.name) ?? ascii(m?.params?.taskId);
  return { ...(method ? { "mcp-method": method } : {}), ...(name ? { "mcp-name": name } : {}) };
}
