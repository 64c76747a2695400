import { createHash } from "node:crypto";
import { AgentCard, type AgentSkill } from "@a2a-js/sdk";
import type { PublicAgent } from "../agents/agent-info.js";
import { a2aPath } from "../agents/protocol-urls.js";
import { oauth2SchemeV03, oauth2SchemeV1 } from "../oauth/card-scheme.js";
import { OAUTH_SCOPE } from "../oauth/resources.js";

/**
 * An agent's public card (docs/design/a2a.md): the v1.0 card, and the v0.3 card (with the v1.0
 * interfaces embedded, as the official SDK serves it) for clients that ask for 0.3 or nothing.
 * Both name the key as HTTP bearer and as `X-API-Key`, in securitySchemes and requirements,
 * each in its version's shape (v1.0: `httpAuthSecurityScheme`, …; v0.3: `type`, `scheme`, …).
 */

/** The HTTP+JSON binding's URL: `<base>/v1` (docs/design/a2a.md). */
export const restUrl = (base: string) => `${base}/v1`;

export const agentBaseUrl = (publicBaseUrl: string, agentId: string) => publicBaseUrl + a2aPath(agentId);

function skillOf(agent: PublicAgent): Pick<AgentSkill, "id" | "name" | "description" | "tags" | "examples" | "inputModes" | "outputModes"> {
  return agent.automation
    ? {
        id: "run",
        name: "Run",
        description: `Starts a run of ${agent.name}: a data part is the run's input, text alone becomes {"text": …}; the task's artifact is the run's result.`,
        tags: ["automation"],
        examples: [],
        inputModes: ["application/json", "text/plain"],
        outputModes: ["application/json"],
      }
    : {
        id: "chat",
        name: "Chat",
        description: `A chat turn with ${agent.name}; the context id is the conversation's thread id, or one the client chose for a new conversation.`,
        tags: ["chat"],
        examples: [],
        inputModes: ["text/plain", "application/json", "image/png", "image/jpeg", "image/webp", "image/gif"],
        outputModes: ["text/plain"],
      };
}

const description = (agent: PublicAgent) => `${agent.name} (${agent.automation ? "automation" : "chat"} agent on Agent Gateway)`;
const KEY_HELP = "The agent's API key (a2a_…)";

export function v1Card(agent: PublicAgent, publicBaseUrl: string): Record<string, unknown> {
  const url = agentBaseUrl(publicBaseUrl, agent.id);
  const skill = skillOf(agent);
  // Through the SDK's codec, so the body is exactly the protobuf JSON form clients parse.
  const card = AgentCard.fromJSON({
    name: agent.name,
    description: description(agent),
    version: agent.updatedAt.toISOString(),
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: restUrl(url), protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: restUrl(url), protocolBinding: "HTTP+JSON", protocolVersion: "0.3" },
    ],
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: "bearer", description: KEY_HELP } },
      apiKey: { apiKeySecurityScheme: { location: "header", name: "X-API-Key", description: KEY_HELP } },
      oauth2: oauth2SchemeV1(publicBaseUrl),
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }, { schemes: { oauth2: { list: [OAUTH_SCOPE] } } }],
    defaultInputModes: skill.inputModes,
    defaultOutputModes: skill.outputModes,
    skills: [skill],
  });
  return AgentCard.toJSON(card) as Record<string, unknown>;
}

/** The v0.3 card; `embedV1` adds the v1.0 interfaces (what a client that sent no version gets). */
export function v03Card(agent: PublicAgent, publicBaseUrl: string, embedV1: boolean): Record<string, unknown> {
  const url = agentBaseUrl(publicBaseUrl, agent.id);
  const skill = skillOf(agent);
  const v1 = v1Card(agent, publicBaseUrl);
  return {
    protocolVersion: "0.3.0",
    name: agent.name,
    description: description(agent),
    version: agent.updatedAt.toISOString(),
    url,
    preferredTransport: "JSONRPC",
    capabilities: { streaming: true, pushNotifications: true },
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", description: KEY_HELP },
      apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: KEY_HELP },
      oauth2: oauth2SchemeV03(publicBaseUrl),
    },
    security: [{ bearer: [] }, { apiKey: [] }, { oauth2: [OAUTH_SCOPE] }],
    defaultInputModes: skill.inputModes,
    defaultOutputModes: skill.outputModes,
    skills: [skill],
    additionalInterfaces: [
      { url, transport: "JSONRPC" },
      { url: restUrl(url), transport: "HTTP+JSON" },
    ],
    supportsAuthenticatedExtendedCard: true,
    ...(embedV1 ? { supportedInterfaces: v1.supportedInterfaces } : {}),
  };
}

/**
 * The card for a client that names no version (the kit, the Python a2a-sdk, curl): the v1.0 card,
 * securitySchemes in the v1.0 shape (the proto's oneof), with the v0.3 fields that do not clash
 * with a v1.0 one added (`url`, `preferredTransport`, `protocolVersion`, `security`), as the
 * reference SDK serves it. A v0.3-only client asks with `A2A-Version: 0.3` or reads agent.json.
 */
export function defaultCard(agent: PublicAgent, publicBaseUrl: string): Record<string, unknown> {
  const v1 = v1Card(agent, publicBaseUrl);
  const legacy = v03Card(agent, publicBaseUrl, false);
  return { ...v1, protocolVersion: legacy.protocolVersion, url: legacy.url, preferredTransport: legacy.preferredTransport, security: legacy.security };
}

/** A strong ETag of the exact body sent. */
export const etagOf = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
