import { McpServer, type CacheHint, type StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { Runtime } from "../runtime/runtime.js";
import { modernToolCall } from "./modern-call.js";
import { agentTools, serverIdentity, type AgentProfile } from "./server.js";
import { TASKS_EXTENSION } from "./task-shape.js";
import { serveTasks } from "./tasks.js";
import { isDeferred, objectSchema } from "./tool-spec.js";

/**
 * The MCP server of an agent profile for the 2026-07-28 revision, on the TypeScript SDK v2
 * (`@modelcontextprotocol/server`): `server/discover`, the per-request `_meta` envelope, the
 * `Mcp-Method`/`Mcp-Name` headers and the list TTLs are the SDK's. The tools are the same specs
 * the initialize era serves (tool-spec.ts). One is built per request (createMcpHandler's model);
 * the caller travels as the request's `authInfo`, as in the other era.
 */

/** One validator for every per-request server (the SDK would build one each). */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * How long a client may reuse tools/list and server/discover. Private: each agent has its own.
 * 10 s: the agent's name is cached that long (agent-names.ts), and which tools an agent has
 * changes only when a script is added or removed.
 */
const LIST_TTL: CacheHint = { ttlMs: 10_000, cacheScope: "private" };

/**
 * A tool schema whose JSON Schema is converted once for the process. The SDK converts a tool's
 * input schema on every tools/call (the x-mcp-header scan) and its output schema for the result,
 * each memoised only on the server, which here lives one request: two zod-to-JSON-Schema
 * conversions per call, the largest item of this era's own CPU per chat call in a profile. The
 * shapes are module constants; validation stays zod's own.
 */
type ToolSchema = StandardSchemaWithJSON<Record<string, unknown>>;
const converted = new WeakMap<z.ZodRawShape, ToolSchema>();
function cachedSchema(shape: z.ZodRawShape): ToolSchema {
  let schema = converted.get(shape);
  if (!schema) {
    const std = objectSchema(shape)["~standard"];
    const json = new Map<string, Record<string, unknown>>();
    const once = (io: "input" | "output") => (options: { target: string }) => {
      const key = `${io} ${options.target}`;
      let value = json.get(key);
      if (!value) json.set(key, (value = std.jsonSchema[io](options as Parameters<typeof std.jsonSchema.input>[0])));
      return value;
    };
    schema = { "~standard": { version: 1, vendor: std.vendor, validate: std.validate, jsonSchema: { input: once("input"), output: once("output") } } } as ToolSchema;
    converted.set(shape, schema);
  }
  return schema;
}

export function modernAgentServer(runtime: Runtime, profile: AgentProfile): McpServer {
  const { serverInfo, instructions } = serverIdentity(profile);
  // Only an automation agent's `run` may answer as a task.
  const capabilities = { tools: { listChanged: false }, ...(profile.automation ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) };
  const server = new McpServer(serverInfo, {
    capabilities,
    instructions,
    jsonSchemaValidator,
    cacheHints: { "tools/list": LIST_TTL, "server/discover": LIST_TTL },
  });
  const specs = agentTools(runtime, profile);
  for (const spec of specs) {
    const { name, title, description, annotations } = spec;
    server.registerTool(name, { title, description, inputSchema: cachedSchema(spec.input), outputSchema: cachedSchema(spec.output), annotations }, async (args, ctx) => {
      const result = await spec.call(args, modernToolCall(ctx, false));
      if (isDeferred(result)) throw new Error("a task or input request answer on a chat agent's server");
      return result;
    });
  }
  // An automation agent's tools/call and tasks/* go through tasks.ts, which may answer with a task.
  if (profile.automation) serveTasks(server, runtime, specs);
  return server;
}
