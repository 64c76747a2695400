import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { testConfig } from "../../test/helpers/config.js";
import { runLimits, runTimeouts } from "./limits.js";
import { createRedactor } from "./redact.js";

const config = testConfig({
  SCRIPT_CPU_TIME_MS: "20000",
  SCRIPT_WALL_TIME_MS: "600000",
  UPSTREAM_TIMEOUT_MS: "1000",
  UPSTREAM_MAX_RETRIES: "1",
});

describe("run limits: one source for the sandbox and the workflow", () => {
  it("an agent's own limits apply below the operator's maximum, never above it", () => {
    expect(runLimits(config, { cpuTimeLimitMs: null, wallTimeLimitMs: null })).toMatchObject({ cpuTimeMs: 20_000, wallTimeMs: 600_000 });
    expect(runLimits(config, { cpuTimeLimitMs: 500, wallTimeLimitMs: 5000 })).toMatchObject({ cpuTimeMs: 500, wallTimeMs: 5000 });
    expect(runLimits(config, { cpuTimeLimitMs: 10_000_000, wallTimeLimitMs: 10_000_000 })).toMatchObject({ cpuTimeMs: 20_000, wallTimeMs: 600_000 });
  });

  it("the execution activity's start-to-close follows the wall time (no hard-coded timeout)", () => {
    const long = runTimeouts(config, { cpuTimeLimitMs: null, wallTimeLimitMs: null });
    const short = runTimeouts(config, { cpuTimeLimitMs: null, wallTimeLimitMs: 5000 });
    expect(long.executionTimeoutMs).toBeGreaterThan(600_000);
    expect(long.executionTimeoutMs - short.executionTimeoutMs).toBe(595_000);
    expect(long.heartbeatTimeoutMs).toBeLessThanOrEqual(10_000);
    const hour = loadConfig({ ...{ OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") }, SCRIPT_WALL_TIME_MS: "3600000" });
    expect(runTimeouts(hour, { cpuTimeLimitMs: null, wallTimeLimitMs: null }).executionTimeoutMs).toBeGreaterThan(3_600_000);
  });

  it("runs per account: unset is the fair share of the worker's slots, a number stays a fixed cap", () => {
    const base = { OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(loadConfig({ ...base, SANDBOX_POOL_SIZE: "8" }).runConcurrency).toEqual({ perAccount: null, perAgent: null, slots: 8 });
    expect(loadConfig({ ...base, RUN_SLOTS: "12", RUN_MAX_CONCURRENT_PER_AGENT: "4" }).runConcurrency).toEqual({ perAccount: null, perAgent: 4, slots: 12 });
    expect(loadConfig({ ...base, RUN_MAX_CONCURRENT_PER_ACCOUNT: "2", RUN_MAX_CONCURRENT_PER_AGENT: "5" }).runConcurrency).toMatchObject({ perAccount: 2, perAgent: 2 });
  });

  it("production refuses EGRESS_ALLOW_PRIVATE", () => {
    expect(() =>
      loadConfig({ NODE_ENV: "production", OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"), PUBLIC_BASE_URL: "https://x.example", PROVIDER_A_API_KEY: "a", PROVIDER_B_API_KEY: "b", EGRESS_ALLOW_PRIVATE: "true" }),
    ).toThrow(/EGRESS_ALLOW_PRIVATE: for development and tests only/);
  });
});

describe("secret redaction", () => {
  const r = createRedactor(['p"a\\ss-1234567', "short-secret-xyz"]);
  it("removes a secret raw, JSON-escaped once and twice, from text and from JSON values", () => {
    expect(r.text('x p"a\\ss-1234567 y')).toBe("x [redacted] y");
    expect(r.text(JSON.stringify({ k: 'p"a\\ss-1234567' }))).toBe('{"k":"[redacted]"}');
    const v = r.json({ a: ['p"a\\ss-1234567'], b: JSON.stringify({ inner: 'p"a\\ss-1234567' }), c: "short-secret-xyz!", ["short-secret-xyz"]: 1 });
    expect(JSON.stringify(v)).not.toMatch(/1234567|short-secret-xyz/);
    expect(v).toMatchObject({ a: ["[redacted]"], c: "[redacted]!", "[redacted]": 1 });
  });
  it("leaves values alone when a run has no secrets", () => {
    const none = createRedactor([]);
    const o = { a: 1 };
    expect(none.json(o)).toBe(o);
    expect(none.text("abc")).toBe("abc");
  });
});
