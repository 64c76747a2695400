import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { registerChatTool } from "./chat-tool.js";
import { registerJobTools } from "./job-tools.js";

/** What the MCP server of an agent is named after and which tools it offers. */
export interface AgentProfile {
  name: string;
  /** An automation agent (it has a script): `run` and `get_job`; a chat agent: `chat`. */
  automation: boolean;
}

export const SERVER_VERSION = "1.0.0";

/**
 * One JSON-schema validator for every per-request server: the SDK would build a new Ajv for each
 * (about a millisecond of CPU), and these servers never validate with it (no elicitation).
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * The MCP server of one agent, built for one HTTP request (stateless Streamable HTTP: any API
 * instance answers any request, nothing is kept between requests; docs/mcp.md). The SDK does the
 * protocol: version negotiation, JSON-RPC framing, argument validation against the schemas.
 */
export function agentMcpServer(runtime: Runtime, principal: KeyPrincipal, profile: AgentProfile): McpServer {
  const server = new McpServer(
    { name: profile.name, title: profile.name, version: SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator,
      instructions: profile.automation
        ? `"${profile.name}" is an automation agent: \`run\` starts a job with a JSON input and waits for its result; \`get_job\` reads a job later.`
        : `"${profile.name}" is a chat agent: \`chat\` sends a message and returns the answer with its thread_id, which continues the conversation.`,
    },
  );
  if (profile.automation) registerJobTools(server, runtime, principal, profile.name);
  else registerChatTool(server, runtime, principal, profile.name);
  return server;
}
