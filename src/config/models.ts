/** The supported model ids (spec 2.5). Routing and prices live in src/providers and src/billing. */
export const SUPPORTED_MODELS = [
  "provider_a/model-2.0-flash",
  "provider_a/model-2.5-flash",
  "provider_a/model-2.5-pro",
  "provider_a/model-3.5-flash",
  "provider_a/model-3.1-pro-preview",
  "provider_b/model-sonnet-4-6",
  "provider_b/model-haiku-4-5-20251001",
] as const;

export type ModelId = (typeof SUPPORTED_MODELS)[number];

export const DEFAULT_MODEL: ModelId = "provider_a/model-2.5-flash";

const supported = new Set<string>(SUPPORTED_MODELS);
export const isSupportedModel = (id: string): id is ModelId => supported.has(id);
