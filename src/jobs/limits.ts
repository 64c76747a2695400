import type { Config } from "../config/config.js";
import type { SandboxLimits } from "../sandbox/index.js";
import { HEARTBEAT_TIMEOUT_MS, type RunTimeouts } from "../../workflows/contract.js";

/** Time to store a run's output after the script's wall time is up, inside one attempt. */
const SAVE_MARGIN_MS = 60_000;

export interface AgentLimits {
  cpuTimeLimitMs: number | null;
  wallTimeLimitMs: number | null;
}

/**
 * The one source of run limits: the agent's own, capped by the operator's maximum
 * (SCRIPT_CPU_TIME_MS, SCRIPT_WALL_TIME_MS), which is also the default.
 */
export function runLimits(config: Pick<Config, "sandbox">, agent: AgentLimits): SandboxLimits {
  const s = config.sandbox;
  return {
    cpuTimeMs: Math.min(agent.cpuTimeLimitMs ?? s.cpuTimeMs, s.cpuTimeMs),
    wallTimeMs: Math.min(agent.wallTimeLimitMs ?? s.wallTimeMs, s.wallTimeMs),
    memoryMb: s.memoryMb,
    maxHostCalls: s.maxHostCalls,
    maxLogLines: s.maxLogLines,
    maxLogLineBytes: s.maxLogLineBytes,
    maxLogBytes: s.maxLogBytes,
    maxResultBytes: s.maxResultBytes,
  };
}

/** The workflow's timeouts for the execution activity, derived from the same limits. */
export function runTimeouts(config: Pick<Config, "sandbox" | "providers">, agent: AgentLimits): RunTimeouts {
  // A run without a script is one model call, with its own upstream timeout and retries.
  const chatOnlyMs = config.providers.timeoutMs * (config.providers.maxRetries + 1);
  return {
    executionTimeoutMs: Math.max(runLimits(config, agent).wallTimeMs, chatOnlyMs) + SAVE_MARGIN_MS,
    heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
  };
}
