import type { Config } from "../config/config.js";
import { SUPPORTED_MODELS } from "../config/models.js";

export type Route =
  | { kind: "provider_a" | "provider_b"; baseUrl: string; apiKey: string; upstreamModel: string }
  | { kind: "openai_compatible"; baseUrl: string; apiKey: string | undefined; upstreamModel: string }
  | { kind: "simulator"; upstreamModel: string };

/**
 * Where a gateway model id goes: an OpenAI-compatible route from config wins; else its provider,
 * with the upstream name remapped by MODEL_NAME_MAP; without credentials (never in production,
 * see config loading) the built-in simulator.
 */
export function resolveRoute(config: Config, model: string): Route {
  const p = config.providers;
  const compatible = p.openAiCompatibleRoutes[model];
  const slash = model.indexOf("/");
  const provider = model.slice(0, slash);
  const upstreamModel = p.modelNameMap[model] ?? model.slice(slash + 1);
  if (compatible) {
    return { kind: "openai_compatible", baseUrl: compatible.baseUrl.replace(/\/+$/, ""), apiKey: compatible.apiKey, upstreamModel: compatible.model ?? upstreamModel };
  }
  const creds = provider === "provider_a" ? p.a : provider === "provider_b" ? p.b : undefined;
  if (!creds?.apiKey) return { kind: "simulator", upstreamModel };
  return { kind: provider as "provider_a" | "provider_b", baseUrl: creds.baseUrl, apiKey: creds.apiKey, upstreamModel };
}

/** Providers that need credentials for some supported model and have none (config check, banner). */
export function providersWithoutCredentials(config: Config): string[] {
  const missing = new Set<string>();
  for (const model of SUPPORTED_MODELS) {
    if (resolveRoute(config, model).kind === "simulator") missing.add(model.slice(0, model.indexOf("/")));
  }
  return [...missing];
}

/**
 * For the dev banner: "live" when every model has a real upstream, "simulator" when all answer
 * from the built-in simulator, "mixed" otherwise; `simulated` names the providers concerned.
 */
export function providersMode(config: Config): { mode: "live" | "simulator" | "mixed"; simulated: string[]; summary: string } {
  const simulated = providersWithoutCredentials(config);
  const mode = simulated.length === 0 ? "live" : simulated.length === 2 ? "simulator" : "mixed";
  const summary =
    mode === "live"
      ? "model providers: live upstreams"
      : `model providers: BUILT-IN SIMULATOR for ${simulated.join(", ")} (set ${simulated.map((s) => `${s.toUpperCase()}_API_KEY`).join(" / ")} for real answers)`;
  return { mode, simulated, summary };
}
