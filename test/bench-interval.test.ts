import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ratioInterval } from "../bench/lib/chat-targets.js";

/** The bench's interval of a cell's ratio (Σ x / Σ a over its slices), drawn from its slices. */
describe("ratioInterval", () => {
  const ratioOf = (x: number[], a: number[]) => x.reduce((s, v) => s + v, 0) / a.reduce((s, v) => s + v, 0);

  it("is the ratio itself when every slice has it", () => {
    const a = [2.9, 3.1, 3.0, 2.8, 3.3];
    const [low, high] = ratioInterval(a.map((v) => v * 1.07), a);
    expect(low).toBeCloseTo(1.07, 10);
    expect(high).toBeCloseTo(1.07, 10);
  });

  it("stays within the slices' own range, the same on every call", () => {
    const slice = fc.double({ min: 1, max: 5, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.tuple(slice, slice), { minLength: 2, maxLength: 40 }), (pairs) => {
        const x = pairs.map((p) => p[0]);
        const a = pairs.map((p) => p[1]);
        const [low, high] = ratioInterval(x, a, 500);
        const ratios = pairs.map((p) => p[0] / p[1]);
        expect(low).toBeLessThanOrEqual(high);
        expect(low).toBeGreaterThanOrEqual(Math.min(...ratios) - 1e-12);
        expect(high).toBeLessThanOrEqual(Math.max(...ratios) + 1e-12);
        expect(ratioInterval(x, a, 500)).toEqual([low, high]);
      }),
    );
  });

  it("narrows as the slices grow in number", () => {
    const noisy = (n: number) => {
      const a = Array.from({ length: n }, (_, i) => 3 + (i % 4) * 0.05);
      return [a.map((v, i) => v * (1.06 + (((i * 7) % 5) - 2) * 0.04)), a] as const;
    };
    const width = (n: number) => {
      const [low, high] = ratioInterval(...noisy(n));
      return high - low;
    };
    expect(width(60)).toBeLessThan(width(10) / 2);
    const [x, a] = noisy(10);
    const [low, high] = ratioInterval(x, a);
    expect(low).toBeLessThan(ratioOf(x, a));
    expect(high).toBeGreaterThan(ratioOf(x, a));
  });
});
