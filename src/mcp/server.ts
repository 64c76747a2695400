import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { InitializeRequestSchema, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";
import { callerOf } from "./auth.js";
import { chatTool } from "./chat-tool.js";
import { jobTools } from "./job-tools.js";
import { JsonResponseTransport } from "./json-transport.js";
import { isDeferred, progressOf, type ToolCall, type ToolSpec } from "./tool-spec.js";

/** What the MCP server of an agent is named after and which tools it offers. */
export interface AgentProfile {
  name: string;
  /** An automation agent (it has a script): `run` and `get_job`; a chat agent: `chat`. */
  automation: boolean;
}

export const SERVER_VERSION = "1.0.0";

/** The tools of a profile, as both eras serve them (tool-spec.ts). */
export const agentTools = (runtime: Runtime, profile: AgentProfile): ToolSpec[] =>
  profile.automation ? jobTools(runtime, profile.name) : [chatTool(runtime, profile.name)];

/** What the server says of itself, in either era. */
export function serverIdentity(profile: AgentProfile) {
  const serverInfo = { name: profile.name, title: profile.name, version: SERVER_VERSION };
  const instructions = profile.automation
    ? `"${profile.name}" is an automation agent: \`run\` starts a job with a JSON input and waits for its result; \`get_job\` reads a job later.`
    : `"${profile.name}" is a chat agent: \`chat\` sends a message and returns the answer with its thread_id, which continues the conversation.`;
  return { serverInfo, instructions };
}

/**
 * One JSON-schema validator for every per-request server: the SDK would build a new Ajv for each
 * (about a millisecond of CPU), and these servers never validate with it (no elicitation).
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * The MCP server of an agent profile (its name and kind). The SDK does the protocol: version
 * negotiation, JSON-RPC framing, argument validation against the schemas. The tools read the
 * caller from each request (auth.ts `callerOf`), so a server is not bound to a key.
 */
function agentMcpServer(runtime: Runtime, profile: AgentProfile): McpServer {
  const { serverInfo, instructions } = serverIdentity(profile);
  const capabilities = { tools: { listChanged: false } };
  const server = new McpServer(serverInfo, { capabilities, jsonSchemaValidator, instructions });
  // A server serves the callers of every agent of its profile, across accounts (agents of the same
  // name and kind). The SDK's own initialize handler keeps the caller's client info and
  // capabilities on the server, each initialize overwriting the last caller's: this one answers
  // the same (version negotiation as the SDK's) and keeps nothing of the caller.
  server.server.setRequestHandler(InitializeRequestSchema, (request) => ({
    protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(request.params.protocolVersion) ? request.params.protocolVersion : LATEST_PROTOCOL_VERSION,
    capabilities,
    serverInfo,
    instructions,
  }));
  for (const spec of agentTools(runtime, profile)) {
    const { name, title, description, input, output, annotations } = spec;
    server.registerTool(name, { title, description, inputSchema: input, outputSchema: output, annotations }, async (args, extra) => {
      const token = extra._meta?.progressToken;
      const call: ToolCall = { principal: callerOf(extra), signal: extra.signal };
      if (token !== undefined) call.progress = progressOf((n) => extra.sendNotification(n), token);
      const result = await spec.call(args, call);
      // Never a task or an input request here: this era has neither, so `tasks` and `rounds` are never set.
      if (isDeferred(result)) throw new Error("a task or input request answer in the initialize era");
      return result;
    });
  }
  return server;
}

/**
 * Idle servers by profile, per runtime. Stateless Streamable HTTP needs a fresh transport per
 * request (the SDK refuses to reuse one), but not a fresh server: building one (the McpServer,
 * its handlers, the tools' schemas) was most of the protocol layer's CPU per call. A server
 * serves one request at a time, connected to that request's transport, and comes back here once
 * it is closed (the SDK supports close() then connect(); an in-flight handler of the previous
 * connection is aborted by the close and answers only to its own transport). Bounded: at most
 * MAX_IDLE servers a profile and MAX_PROFILES profiles (then it starts over).
 */
const MAX_IDLE = 16;
const MAX_PROFILES = 1_000;
const idleOf = perRuntime(() => new Map<string, McpServer[]>());

/** A server of the profile for one request; `release` closes it (aborting its tool calls in flight) and keeps it for a later one. */
export function leaseAgentMcpServer(runtime: Runtime, profile: AgentProfile): { server: McpServer; release: () => void } {
  const idle = idleOf(runtime);
  const key = `${profile.automation ? "automation" : "chat"}:${profile.name}`;
  const server = idle.get(key)?.pop() ?? agentMcpServer(runtime, profile);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    void server.close().then(
      () => {
        if (idle.size >= MAX_PROFILES && !idle.has(key)) idle.clear();
        const list = idle.get(key) ?? [];
        if (list.length < MAX_IDLE) list.push(server);
        idle.set(key, list);
      },
      () => {},
    );
  };
  return { server, release };
}

/**
 * A chat agent's server, connected once to its own long-lived JSON-response transport
 * (json-transport.ts), which serves every POST of the profile, concurrently. Bounded like the
 * idle pool: past MAX_PROFILES profiles the map starts over; a forgotten server still answers the
 * requests it has (their route holds its transport) and is then collected (no timers, no sockets).
 */
const connectedOf = perRuntime(() => new Map<string, Promise<JsonResponseTransport>>());

export function chatAgentTransport(runtime: Runtime, name: string): Promise<JsonResponseTransport> {
  const connected = connectedOf(runtime);
  const known = connected.get(name);
  if (known) return known;
  if (connected.size >= MAX_PROFILES) connected.clear();
  const transport = new JsonResponseTransport();
  const ready = agentMcpServer(runtime, { name, automation: false })
    .connect(transport)
    .then(() => transport);
  ready.catch(() => connected.delete(name));
  connected.set(name, ready);
  return ready;
}
