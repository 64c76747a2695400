import { AgentCard } from "@a2a-js/sdk";
import type { PublicAgent } from "../agents/agent-info.js";
import type { KeyPrincipal } from "../keys/auth.js";
import { v1Card } from "./card.js";

/**
 * The authenticated extended card (GetExtendedAgentCard, spec §3.1.11): the public card plus what
 * only a holder of the agent's key may see, the agent's models and the key's limits, as the
 * gateway's own card extension (`capabilities.extensions`, the proto's place for what the card
 * has no field for). Never the instructions or the script, as on the public card.
 */

export const LIMITS_EXTENSION = "urn:agent-gateway:a2a:models-and-limits:v1";

export interface ExtendedLimits {
  a2aMaxStreamsPerKey: number;
  a2aBlockingWaitMs: number;
}

export function extendedCard(agent: PublicAgent, principal: KeyPrincipal, publicBaseUrl: string, limits: ExtendedLimits): AgentCard {
  const card = v1Card(agent, publicBaseUrl) as { capabilities: Record<string, unknown>; skills: { description: string }[] };
  const info = principal.agent;
  const models = info.allowedModels?.length ? info.allowedModels : undefined;
  const params = {
    defaultModel: info.defaultModel,
    // null: every model the gateway supports (GET /api/v1/models).
    allowedModels: models ?? null,
    fallbackModels: info.fallbackModels ?? [],
    rateLimitPerMinute: principal.rateLimitPerMinute,
    maxStreamsPerKey: limits.a2aMaxStreamsPerKey,
    blockingWaitSeconds: Math.round(limits.a2aBlockingWaitMs / 1000),
  };
  const skills = agent.automation
    ? card.skills
    : card.skills.map((s) => ({ ...s, description: `${s.description} Model: ${info.defaultModel}${models ? ` (allowed: ${models.join(", ")})` : ""}.` }));
  return AgentCard.fromJSON({
    ...card,
    skills,
    capabilities: {
      ...card.capabilities,
      extensions: [{ uri: LIMITS_EXTENSION, description: "The agent's models and this key's limits on Agent Gateway", required: false, params }],
    },
  });
}
