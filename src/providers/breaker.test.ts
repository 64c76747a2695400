import { describe, expect, it } from "vitest";
import { Metrics } from "../infra/metrics.js";
import { ModelBreaker } from "./breaker.js";

/** The breaker's state machine on a fake clock: opens on N failures in the window, one probe after the cool-down. */
describe("ModelBreaker", () => {
  const settings = { failures: 3, windowMs: 1000, cooldownMs: 500 };
  const make = () => {
    let t = 0;
    const metrics = new Metrics(false);
    const b = new ModelBreaker("m", settings, metrics, () => t);
    const gauge = async () => (await metrics.modelCircuitState.get()).values.find((v) => v.labels.model === "m")?.value;
    return { b, gauge, advance: (ms: number) => (t += ms) };
  };

  it("opens after N failures within the window, not after N spread wider", async () => {
    const { b, gauge, advance } = make();
    b.failure();
    advance(600);
    b.failure();
    advance(600); // the first failure left the window
    b.failure();
    expect(b.allow()).toBe(true);
    expect(b.current).toBe("closed");
    b.failure();
    expect(b.current).toBe("open");
    expect(b.allow()).toBe(false);
    expect(await gauge()).toBe(1);
  });

  it("lets exactly one probe through after the cool-down; success closes, failure reopens", async () => {
    const { b, gauge, advance } = make();
    for (let i = 0; i < 3; i++) b.failure();
    advance(499);
    expect(b.allow()).toBe(false);
    advance(1);
    expect(b.allow()).toBe(true);
    expect(b.current).toBe("half_open");
    expect(await gauge()).toBe(2);
    expect(b.allow()).toBe(false); // one probe at a time
    b.failure();
    expect(b.current).toBe("open");
    advance(500);
    expect(b.allow()).toBe(true);
    b.release(); // the probe said nothing (client left): another may probe
    expect(b.allow()).toBe(true);
    b.success();
    expect(b.current).toBe("closed");
    expect(await gauge()).toBe(0);
    expect(b.allow()).toBe(true);
  });
});
