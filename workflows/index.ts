// Deterministic workflow code only: no I/O, no clocks, no randomness outside the workflow APIs.
export { healthCheck } from "./health-check.js";
export { agentRun, purgePayloads } from "./agent-run.js";
export { scheduledRun } from "./scheduled-run.js";
export { deliver } from "./deliver.js";
