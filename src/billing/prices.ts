import type { Config } from "../config/config.js";
import type { Param } from "../db/statement.js";
import { parseUsd } from "../infra/money.js";

/**
 * Prices in integer micro-USD per million tokens (so 0.30 USD/M = 300_000). Defaults follow the
 * public list prices of the model families the ids stand for; MODEL_PRICES overrides them.
 */
export interface Price {
  inputMicrosPerM: number;
  outputMicrosPerM: number;
}

export const DEFAULT_PRICES_USD: Record<string, { input: string; output: string }> = {
  "provider_a/model-2.0-flash": { input: "0.10", output: "0.40" },
  "provider_a/model-2.5-flash": { input: "0.30", output: "2.50" },
  "provider_a/model-2.5-pro": { input: "1.25", output: "10" },
  "provider_a/model-3.5-flash": { input: "0.50", output: "3" },
  "provider_a/model-3.1-pro-preview": { input: "2", output: "12" },
  "provider_b/model-sonnet-4-6": { input: "3", output: "15" },
  "provider_b/model-haiku-4-5-20251001": { input: "1", output: "5" },
};

const FALLBACK = { input: "3", output: "15" };

function micros(value: string | number, model: string): number {
  const m = parseUsd(value);
  if (m === null) throw new Error(`MODEL_PRICES: price for ${model} is not a decimal USD amount`);
  return Number(m);
}

/** Resolved once per config (prices are read on every request). */
const cache = new WeakMap<Config, Map<string, Price>>();

export function priceFor(config: Config, model: string): Price {
  let table = cache.get(config);
  if (!table) {
    table = new Map();
    cache.set(config, table);
  }
  let price = table.get(model);
  if (!price) {
    const p = config.modelPrices[model] ?? DEFAULT_PRICES_USD[model] ?? FALLBACK;
    price = { inputMicrosPerM: micros(p.input, model), outputMicrosPerM: micros(p.output, model) };
    table.set(model, price);
  }
  return price;
}

/** Cost in micro-USD, rounded up (a call is never free because it was small). */
export function costMicros(price: Price, promptTokens: number, completionTokens: number): number {
  const scaled = promptTokens * price.inputMicrosPerM + completionTokens * price.outputMicrosPerM;
  return Math.ceil(scaled / 1_000_000);
}

/**
 * Worst-case prompt size for the hold, before the upstream has counted anything. Tokenizers
 * average ~4 bytes per token on prose; half the UTF-8 length plus per-message overhead is a
 * safe upper bound for ordinary text, and settle() corrects it to the upstream's count.
 */
export function worstCasePromptTokens(messages: { content: string }[]): number {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(m.content, "utf8");
  return Math.ceil(bytes / 2) + 8 * messages.length + 16;
}

/** `extraPromptTokens`: prompt parts that are not text (images), counted by their provider's bound. */
export function holdMicros(price: Price, messages: { content: string }[], maxTokens: number, extraPromptTokens = 0): number {
  return costMicros(price, worstCasePromptTokens(messages) + extraPromptTokens, maxTokens);
}

/**
 * `holdMicros` as an SQL expression (bigint), for a hold whose prompt is partly stored: a thread
 * continuation's open statement sizes its hold on the history it reads in the same statement
 * (chat/store.ts). The prompt is the request's part, given as parameters (`promptBytes`,
 * `promptMessages`, `promptExtraTokens`: what `worstCasePromptTokens`' arguments and
 * `extraPromptTokens` add up to, see `promptParams`), plus `stored` (SQL expressions over the
 * stored messages: UTF-8 bytes, count, extra tokens). Prices and `maxTokens` are parameters too
 * (`inputMicrosPerM`, `outputMicrosPerM`, `maxTokens`). The same integer arithmetic as above:
 * bytes and sums stay far below 2^53, so both give the same amount (prices.test.ts pins it).
 */
export function holdMicrosSql(p: Param, stored: { bytes: string; messages: string; extraTokens: string }): string {
  const tokens = `((${p("promptBytes")}::bigint + ${stored.bytes} + 1) / 2 + 8 * (${p("promptMessages")}::bigint + ${stored.messages}) + 16 + ${p("promptExtraTokens")}::bigint + ${stored.extraTokens})`;
  return `((${tokens} * ${p("inputMicrosPerM")}::bigint + ${p("maxTokens")}::bigint * ${p("outputMicrosPerM")}::bigint + 999999) / 1000000)`;
}

/** The parameters of `holdMicrosSql` for the request's part of the prompt (`messages` as `holdMicros` takes them). */
export function promptParams(price: Price, messages: { content: string }[], maxTokens: number, extraPromptTokens = 0) {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(m.content, "utf8");
  return {
    promptBytes: bytes,
    promptMessages: messages.length,
    promptExtraTokens: extraPromptTokens,
    inputMicrosPerM: price.inputMicrosPerM,
    outputMicrosPerM: price.outputMicrosPerM,
    maxTokens,
  };
}
