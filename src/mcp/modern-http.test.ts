import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { isModernMessage, type EraHeaders } from "./modern-http.js";

/**
 * The route tells the eras apart with two shortcuts before the SDK's classifier (the plainly
 * initialize-era message, the plainly 2026-07-28 one). Whatever the message and headers, a message
 * the classifier routes to an era goes to that era; one it refuses outright (not JSON-RPC at all)
 * may be refused by either era's server.
 */
const versions = fc.constantFrom(undefined, "2026-07-28", "2025-11-25", "2025-06-18", " 2026-07-28 ", "2027-01-01", "", "garbage");
const methods = fc.constantFrom("tools/call", "tools/list", "initialize", "server/discover", "notifications/initialized", "ping", "");
const meta = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant("not an object"),
  fc.record({ [PROTOCOL_VERSION_META_KEY]: versions }, { requiredKeys: [] }),
  fc.record({
    [PROTOCOL_VERSION_META_KEY]: versions,
    "io.modelcontextprotocol/clientInfo": fc.oneof(fc.constant({ name: "c", version: "1" }), fc.anything()),
    "io.modelcontextprotocol/clientCapabilities": fc.oneof(fc.constant({}), fc.anything()),
    progressToken: fc.oneof(fc.string(), fc.integer()),
  }, { requiredKeys: [] }),
);
const params = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constant([]), fc.record({ name: fc.string(), _meta: meta }, { requiredKeys: [] }), fc.anything());
const message = fc.record(
  { jsonrpc: fc.constantFrom("2.0", "1.0", undefined), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)), method: fc.oneof(methods, fc.anything()), params, result: fc.anything(), error: fc.anything() },
  { requiredKeys: [] },
);
/** Mostly what clients send: a request or notification of a known method, its params with or without an envelope. */
const wellFormed = fc.record(
  { jsonrpc: fc.constant("2.0"), id: fc.option(fc.integer(), { nil: undefined }), method: methods, params: fc.record({ name: fc.constant("chat"), _meta: meta }, { requiredKeys: [] }) },
  { requiredKeys: ["jsonrpc", "method"] },
);
const body = fc.oneof({ weight: 8, arbitrary: wellFormed }, { weight: 3, arbitrary: message }, fc.array(message, { maxLength: 2 }), fc.anything());
const headers: fc.Arbitrary<EraHeaders> = fc.record({ protocolVersion: versions, method: fc.oneof(methods, fc.constant(undefined)), name: fc.oneof(fc.constant("chat"), fc.constant(undefined)) }, { requiredKeys: [] });

describe("MCP era of a POST", () => {
  it("is the SDK classifier's own, shortcuts included, for any message and headers it routes", () => {
    fc.assert(
      fc.property(body, headers, (b, h) => {
        const sdk = classifyInboundRequest({ httpMethod: "POST", body: b, protocolVersionHeader: h.protocolVersion, mcpMethodHeader: h.method, mcpNameHeader: h.name });
        if (sdk.kind !== "reject") expect(isModernMessage(b, h)).toBe(sdk.kind === "modern");
      }),
      { numRuns: 10_000 },
    );
  });

  it("takes a chat call with its envelope as 2026-07-28, and one without as the initialize era", () => {
    const call = (m?: object) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "chat", arguments: { message: "hi" }, ...(m ? { _meta: m } : {}) } });
    expect(isModernMessage(call({ [PROTOCOL_VERSION_META_KEY]: "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} }), {})).toBe(true);
    expect(isModernMessage(call(), {})).toBe(false);
    expect(isModernMessage(call(), { protocolVersion: "2025-11-25" })).toBe(false);
  });
});
