import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors/app-error.js";
import { oddString } from "../../test/fuzz/arbitraries.js";
import { formatEvery, parseClock, parseCron, parseEvery, parseTimezone } from "./spec.js";

const paramOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== "validation_failed") throw err;
    return err.param;
  }
};

describe("schedule clock validation", () => {
  it("accepts the common cron grammar and rejects the rest, naming cron", () => {
    for (const ok of ["* * * * *", "*/5 * * * *", "0 9 * * MON-FRI", "0,30 8-18/2 1 JAN,jul *", "59 23 31 12 6"]) expect(() => parseCron(ok)).not.toThrow();
    for (const bad of ["", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 7", "5-1 * * * *", "*/0 * * * *", "*-5 * * * *", "@daily", "? * * * *", "a b c d e"]) {
      expect(paramOf(() => parseCron(bad)), bad).toBe("cron");
    }
  });

  it("every: whole seconds, at least 1; time zones by IANA name only", () => {
    expect(parseEvery("30s")).toBe(30);
    expect(parseEvery("5m")).toBe(300);
    expect(parseEvery("1h")).toBe(3600);
    expect(parseEvery("2000ms")).toBe(2);
    for (const bad of ["0s", "500ms", "1500ms", "-1s", "1", "1 week", "1.5h", "999999999999d", ""]) expect(paramOf(() => parseEvery(bad)), bad).toBe("every");
    expect(parseTimezone("europe/berlin")).toBe("Europe/Berlin");
    expect(parseTimezone("UTC")).toBe("UTC");
    for (const bad of ["Mars/Olympus", "+01:00", "", "Europe/Berlin\u0000", "../../etc/passwd"]) expect(paramOf(() => parseTimezone(bad)), bad).toBe("timezone");
    expect(formatEvery(90)).toBe("90s");
    expect(formatEvery(7200)).toBe("2h");
  });

  it("exactly one of cron and every", () => {
    expect(paramOf(() => parseClock({}))).toBe("cron");
    expect(paramOf(() => parseClock({ cron: "* * * * *", every: "1m" }))).toBe("every");
    expect(parseClock({ every: "2s" })).toEqual({ cron: null, everySeconds: 2, timezone: "UTC" });
  });

  it("any input: a clock or a validation_failed naming cron, every or timezone (never another error)", () => {
    const maybe = fc.option(fc.oneof(oddString, fc.constantFrom("* * * * *", "1s", "UTC", "0 0 * * SUN", "10m")), { nil: undefined });
    fc.assert(
      fc.property(maybe, maybe, maybe, (cron, every, timezone) => {
        const param = paramOf(() => parseClock({ cron, every, timezone }));
        if (param !== undefined) expect(["cron", "every", "timezone"]).toContain(param);
      }),
      { numRuns: 2000 },
    );
  });
});
