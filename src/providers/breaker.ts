import type { Config } from "../config/config.js";
import type { Metrics } from "../infra/metrics.js";

/**
 * A circuit breaker per model and process: during an outage, calls skip a model that failed
 * `failures` times within `windowMs` instead of paying its timeout and retries every time. After
 * `cooldownMs` one call (the probe) may try it again: success closes the breaker, failure opens
 * it for another cool-down. Only upstream failures count (connect errors, timeouts, 429, 5xx);
 * a request the provider rejects (4xx) or a client that leaves says nothing about its health.
 */
export type CircuitState = "closed" | "open" | "half_open";
const GAUGE: Record<CircuitState, number> = { closed: 0, open: 1, half_open: 2 };

export class ModelBreaker {
  private failures: number[] = [];
  private state: CircuitState = "closed";
  private openedAt = 0;
  private probing = false;

  constructor(
    private readonly model: string,
    private readonly settings: Config["providers"]["breaker"],
    private readonly metrics: Metrics | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.publish();
  }

  get current(): CircuitState {
    return this.state;
  }

  /** Whether a call may go to the model now; in half-open, only the one probe may. */
  allow(): boolean {
    if (this.state === "closed") return true;
    if (this.state === "open" && this.now() - this.openedAt >= this.settings.cooldownMs) this.set("half_open");
    if (this.state === "half_open" && !this.probing) {
      this.probing = true;
      return true;
    }
    return false;
  }

  success(): void {
    this.failures = [];
    this.probing = false;
    if (this.state !== "closed") this.set("closed");
  }

  failure(): void {
    const now = this.now();
    this.probing = false;
    if (this.state === "half_open") return this.open(now);
    this.failures = this.failures.filter((t) => now - t < this.settings.windowMs);
    this.failures.push(now);
    if (this.state === "closed" && this.failures.length >= this.settings.failures) this.open(now);
  }

  /** A probe that ended with neither verdict (client left, request rejected): let another try. */
  release(): void {
    this.probing = false;
  }

  private open(now: number): void {
    this.openedAt = now;
    this.failures = [];
    this.set("open");
  }

  private set(state: CircuitState): void {
    this.state = state;
    this.publish();
  }

  private publish(): void {
    this.metrics?.modelCircuitState.set({ model: this.model }, GAUGE[this.state]);
  }
}

/** One set of breakers per configuration (per app instance), created on first use of a model. */
const registries = new WeakMap<Config, Map<string, ModelBreaker>>();

export function breakerFor(config: Config, metrics: Metrics | undefined, model: string): ModelBreaker | undefined {
  if (config.providers.breaker.failures <= 0) return undefined;
  let byModel = registries.get(config);
  if (!byModel) registries.set(config, (byModel = new Map()));
  let breaker = byModel.get(model);
  if (!breaker) byModel.set(model, (breaker = new ModelBreaker(model, config.providers.breaker, metrics)));
  return breaker;
}
