import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { costMicros, holdMicros, priceFor, worstCasePromptTokens } from "./prices.js";

const config = loadConfig({
  OPERATOR_TOKEN: "x".repeat(32),
  SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"),
  NODE_ENV: "test",
  MODEL_PRICES: JSON.stringify({ "provider_a/model-2.5-pro": { input: "2", output: 20 } }),
});

describe("prices (integer micro-USD)", () => {
  it("uses defaults, overridable by config", () => {
    expect(priceFor(config, "provider_b/model-sonnet-4-6")).toEqual({ inputMicrosPerM: 3_000_000, outputMicrosPerM: 15_000_000 });
    expect(priceFor(config, "provider_a/model-2.5-pro")).toEqual({ inputMicrosPerM: 2_000_000, outputMicrosPerM: 20_000_000 });
  });

  it("computes cost rounded up, never fractional", () => {
    const p = priceFor(config, "provider_a/model-2.5-flash"); // 0.30 / 2.50 per M
    expect(costMicros(p, 11, 3)).toBe(11); // 3.3 + 7.5 = 10.8 → 11
    expect(costMicros(p, 1_000_000, 0)).toBe(300_000);
    expect(costMicros(p, 0, 0)).toBe(0);
    expect(Number.isInteger(costMicros(p, 7, 13))).toBe(true);
  });

  it("holds the worst case: prompt upper bound plus max_tokens", () => {
    const p = priceFor(config, "provider_a/model-2.5-flash");
    const msgs = [{ content: "You are Ada." }, { content: "x" }];
    expect(worstCasePromptTokens(msgs)).toBe(39);
    expect(holdMicros(p, msgs, 10)).toBe(costMicros(p, 39, 10));
    expect(holdMicros(p, msgs, 10)).toBeGreaterThanOrEqual(costMicros(p, 11, 3));
  });
});
