import { z } from "zod";
import { area, variable } from "../variable.js";
import { url, jsonRecord } from "../values.js";

/** The configuration variables of the area "Models and chat". */
export const modelsArea = area("Models and chat", "Upstream providers, model routing and prices, and the chat turn's limits.", {
  PROVIDER_A_BASE_URL: variable(url(["http:", "https:"]).default("https://generativelanguage.googleapis.com"), "Gemini-style upstream for `provider_a/*`"),
  PROVIDER_A_API_KEY: variable(z.string().trim().min(1).optional(), "Sent as `x-goog-api-key`", "unset (dev: built-in simulator)"),
  PROVIDER_B_BASE_URL: variable(url(["http:", "https:"]).default("https://api.anthropic.com"), "Anthropic-style upstream for `provider_b/*`"),
  PROVIDER_B_API_KEY: variable(z.string().trim().min(1).optional(), "Sent as `x-api-key`", "unset (dev: built-in simulator)"),
  MODEL_NAME_MAP: variable(jsonRecord(z.string().min(1), '{"provider_b/model-sonnet-4-6":"claude-sonnet-4-6"}').optional(), "JSON: upstream model name per model id, e.g. `{\"provider_b/model-sonnet-4-6\":\"claude-sonnet-4-6\"}`", "`{}`"),
  OPENAI_COMPATIBLE_ROUTES: variable(jsonRecord(
    z.object({ baseUrl: url(["http:", "https:"]), model: z.string().min(1).optional(), apiKey: z.string().optional() }),
    '{"provider_a/model-2.0-flash":{"baseUrl":"http://127.0.0.1:8000/v1"}}',
  ).optional(), "JSON: route model ids to an OpenAI-compatible server, e.g. `{\"provider_a/model-2.0-flash\":{\"baseUrl\":\"http://127.0.0.1:8000/v1\",\"model\":\"llama3\"}}`", "`{}`"),
  MODEL_PRICES: variable(jsonRecord(
    z.object({ input: z.union([z.string(), z.number()]), output: z.union([z.string(), z.number()]) }),
    '{"provider_a/model-2.5-pro":{"input":"1.25","output":"10"}}',
  ).optional(), "JSON: USD per million tokens, e.g. `{\"provider_a/model-2.5-pro\":{\"input\":\"1.25\",\"output\":\"10\"}}`", "built-in table"),
  DEFAULT_RATE_LIMIT_PER_MINUTE: variable(z.coerce.number().int().min(1).max(1_000_000).default(600), "Chat requests per minute per key when neither key nor account sets one"),
  HOLD_RECLAIM_INTERVAL_MS: variable(z.coerce.number().int().min(100).max(3_600_000).default(60_000), "How often every API instance (and each one at start) settles chat turns whose thread lease expired — a crashed instance's turns: the hold is handed back whole, the thread freed, an A2A task of the turn ended FAILED (its push configs notified)"),
  UPSTREAM_TIMEOUT_MS: variable(z.coerce.number().int().min(100).max(600_000).default(120_000), "Idle timeout of one upstream model call: the longest wait for the answer's first byte or between two bytes of it (a long stream that keeps producing is never cut)"),
  UPSTREAM_MAX_RETRIES: variable(z.coerce.number().int().min(0).max(10).default(2), "Retries of connect errors, 429 and 5xx before the first byte reaches the client"),
  MODEL_BREAKER_FAILURES: variable(z.coerce.number().int().min(0).max(1000).default(5), "Failed calls of one model (after their retries) within the window that open its circuit breaker; `0` turns breakers off"),
  MODEL_BREAKER_WINDOW_MS: variable(z.coerce.number().int().min(100).max(3_600_000).default(30_000), "The window those failures are counted in"),
  MODEL_BREAKER_COOLDOWN_MS: variable(z.coerce.number().int().min(50).max(3_600_000).default(30_000), "How long an open breaker skips its model before one probe call may try it"),
  DEFAULT_MAX_OUTPUT_TOKENS: variable(z.coerce.number().int().min(1).max(1_000_000).default(4096), "`max_tokens` sent when the request gives none (provider_b requires one)"),
  CHAT_MAX_IMAGE_BYTES: variable(z.coerce.number().int().min(1024).max(20 * 1024 * 1024).default(2 * 1024 * 1024), "Largest decoded image (data URL) in a chat or responses request; larger answers 400 naming the part"),
});
