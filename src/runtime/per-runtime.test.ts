import { describe, expect, it } from "vitest";
import type { Runtime } from "./runtime.js";
import { perRuntime } from "./per-runtime.js";

describe("perRuntime", () => {
  it("makes one value per runtime, on first use; start runs once, after it is stored", () => {
    const [a, b] = [{} as Runtime, {} as Runtime];
    const seen: string[] = [];
    let made = 0;
    const counter = perRuntime(
      () => ({ n: ++made }),
      (value, runtime) => {
        // What start sets off may ask for the value again: it gets the stored one, not a second.
        seen.push(`start ${value.n} ${counter(runtime) === value}`);
      },
    );
    expect(counter.peek(a)).toBeUndefined();
    const first = counter(a);
    expect(counter(a)).toBe(first);
    expect(counter.peek(a)).toBe(first);
    expect(counter(b)).not.toBe(first);
    expect(made).toBe(2);
    expect(seen).toEqual(["start 1 true", "start 2 true"]);
  });
});
