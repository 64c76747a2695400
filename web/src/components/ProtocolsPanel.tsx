import type { Agent } from "../api";
import { useRemembered } from "../hooks/useRemembered";
import { CodeTabs } from "./CodeTabs";
import { CopyField } from "./CopyField";

/** The agent's A2A and MCP endpoints (URLs from the server's PUBLIC_BASE_URL) and client set-ups. */
export function ProtocolsPanel({ agent }: { agent: Agent }) {
  const key = useRemembered(agent.id)?.key ?? "a2a_YOUR_KEY";
  const slug = agent.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "agent";
  const a2aBase = agent.a2aCardUrl.replace(/\/\.well-known\/agent-card\.json$/, "");
  const call = agent.kind === "AUTOMATION" ? `"run", {"input": {"hello": "world"}, "wait_seconds": 60}` : `"chat", {"message": "Hello!"}`;
  const callJs = agent.kind === "AUTOMATION" ? `{ name: "run", arguments: { input: { hello: "world" }, wait_seconds: 60 } }` : `{ name: "chat", arguments: { message: "Hello!" } }`;
  const examples = {
    vscode: `// .vscode/mcp.json (VS Code), or the "servers" entry of your user mcp.json
{
  "servers": {
    "${slug}": {
      "type": "http",
      "url": "${agent.mcpUrl}",
      "headers": { "Authorization": "Bearer ${key}" }
    }
  }
}`,
    claude: `claude mcp add --transport http ${slug} ${agent.mcpUrl} \\
  --header "Authorization: Bearer ${key}"`,
    python: `# pip install mcp
import asyncio, httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async def main():
    http = httpx2.AsyncClient(headers={"Authorization": "Bearer ${key}"})
    async with Client(streamable_http_client("${agent.mcpUrl}", http_client=http)) as client:
        print(await client.call_tool(${call}))

asyncio.run(main())`,
    node: `// npm install @modelcontextprotocol/sdk
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const client = new Client({ name: "my-app", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL("${agent.mcpUrl}"), {
  requestInit: { headers: { Authorization: "Bearer ${key}" } },
}));
console.log(await client.callTool(${callJs}));`,
    a2a: `# pip install a2a-sdk httpx
import asyncio, httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest

async def main():
    http = httpx.AsyncClient(headers={"Authorization": "Bearer ${key}"}, timeout=120)
    client = await create_client("${a2aBase}", ClientConfig(httpx_client=http))
    async for event in client.send_message(SendMessageRequest(message=new_text_message("Hello!", role=Role.ROLE_USER))):
        print(event)

asyncio.run(main())`,
  };
  const labels = { vscode: "MCP: VS Code", claude: "MCP: Claude Code", python: "MCP: Python (mcp)", node: "MCP: Node.js (SDK)", a2a: "A2A: Python (a2a-sdk)" };
  return (
    <section className="panel" id="protocols" aria-labelledby="protocols-h">
      <h2 id="protocols-h">A2A and MCP</h2>
      <p className="help">
        Agents and MCP clients reach this agent with the same API keys, sent as <code>Authorization: Bearer</code>.{" "}
        {agent.kind === "AUTOMATION" ? (
          <>
            Its MCP tools are <code>run</code> (starts a job and waits for its result) and <code>get_job</code>.
          </>
        ) : (
          <>
            Its MCP tool is <code>chat</code>; pass the answer&apos;s <code>thread_id</code> back to continue a conversation.
          </>
        )}
      </p>
      <CopyField label="A2A agent card URL" value={agent.a2aCardUrl} />
      <CopyField label="MCP server URL" value={agent.mcpUrl} />
      <CodeTabs id="protocol" examples={examples} labels={labels} ariaLabel="Client" />
    </section>
  );
}
