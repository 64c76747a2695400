import { findAgent } from "../agents/service.js";
import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";

/**
 * Agent names for the MCP servers' titles and descriptions, cached briefly per process: a name
 * only labels the tools, so a rename may show a few seconds late, and most requests (tool calls)
 * then cost no query for it. Which tools an agent has comes from the key lookup, always fresh.
 */
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;
const namesOf = perRuntime(() => new Map<string, { name: string; at: number }>());

export async function agentName(runtime: Runtime, accountId: string, agentId: string): Promise<string | undefined> {
  const names = namesOf(runtime);
  const hit = names.get(agentId);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.name;
  const agent = await findAgent(runtime.orm.em.fork(), accountId, agentId);
  if (!agent) return undefined;
  if (names.size >= MAX_ENTRIES) names.clear();
  names.set(agentId, { name: agent.name, at: Date.now() });
  return agent.name;
}
