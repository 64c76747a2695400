import { describe, expect, it } from "vitest";
import { formatUsd, parseUsd } from "./money.js";

describe("money", () => {
  it("parses decimal USD into integer micro-USD without floating point", () => {
    expect(parseUsd("10")).toBe(10_000_000n);
    expect(parseUsd("0.1")).toBe(100_000n);
    expect(parseUsd("2.50")).toBe(2_500_000n);
    expect(parseUsd("0.000001")).toBe(1n);
    expect(parseUsd(" 3 ")).toBe(3_000_000n);
    expect(parseUsd(12.5)).toBe(12_500_000n);
  });

  it("rejects anything that is not a plain non-negative decimal with at most 6 places", () => {
    for (const bad of ["", "-1", "1e3", "abc", "1.0000001", "1,5", "0x10", "1.", ".5"]) expect(parseUsd(bad)).toBeNull();
    expect(parseUsd(Number.NaN)).toBeNull();
  });

  it("formats micro-USD with six places", () => {
    expect(formatUsd(10_000_000)).toBe("10.000000");
    expect(formatUsd(1)).toBe("0.000001");
    expect(formatUsd("123456789")).toBe("123.456789");
    expect(formatUsd(-2_500_000n)).toBe("-2.500000");
  });
});
