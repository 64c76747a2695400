import { z } from "zod";
import { area, variable } from "../variable.js";

/** The configuration variables of the area "Runs and schedules". */
export const runsArea = area("Runs and schedules", "Automation scripts in the sandbox: their limits, the run slots and how they are shared, schedules.", {
  SCRIPT_CPU_TIME_MS: variable(z.coerce.number().int().min(10).max(3_600_000).default(30_000), "CPU time of one run (the script's own computing, not its waiting); maximum and default of the agents' `cpuTimeLimitMs`"),
  SCRIPT_WALL_TIME_MS: variable(z.coerce.number().int().min(100).max(3_600_000).default(900_000), "Wall time of one run attempt, awaits included; maximum and default of `wallTimeLimitMs`; the workflow's timeouts derive from it"),
  SCRIPT_MEMORY_MB: variable(z.coerce.number().int().min(8).max(1024).default(64), "Memory of a script's WebAssembly instance"),
  SCRIPT_MAX_HOST_CALLS: variable(z.coerce.number().int().min(0).max(10_000).default(100), "`ctx.chat`/`ctx.fetch`/`ctx.step`/`ctx.ask` calls one run may make (`ctx.log` is capped by lines)"),
  SCRIPT_MAX_RESULT_BYTES: variable(z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024), "Size of a run's JSON result"),
  SCRIPT_MAX_LOG_LINES: variable(z.coerce.number().int().min(0).max(100_000).default(1000), "`ctx.log` lines kept per run, then a \"truncated\" line"),
  SCRIPT_MAX_LOG_LINE_BYTES: variable(z.coerce.number().int().min(64).max(1024 * 1024).default(4096), "UTF-8 bytes of one `ctx.log` line, cut inside the sandbox with a marker"),
  SCRIPT_MAX_LOG_BYTES: variable(z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(256 * 1024), "UTF-8 bytes of all `ctx.log` lines of one run, counted inside the sandbox; later lines are dropped"),
  SCRIPT_MAX_BYTES: variable(z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024), "Size of an agent's script (editor, import, CLI)"),
  // 3, not 2: the worker's activity pollers hold two slots while they wait, and an activity is
  // dispatched eagerly (~35 ms sooner; src/temporal/worker.ts) only into a third.
  SANDBOX_POOL_SIZE: variable(z.coerce.number().int().min(1).max(64).default(3), "Worker threads running scripts (a worker's activity slots; below 3 no activity is dispatched eagerly: docs/design/webhook-runs-performance.md)"),
  SANDBOX_THREAD_MAX_RUNS: variable(z.coerce.number().int().min(1).max(100_000).default(100), "Runs one sandbox thread serves before it is replaced by a fresh one, made ahead of the run that needs it. A thread keeps about 0.3 MB of each run that its own garbage collection does not return (docs/capacity.md, \"Memory\"); lower bounds a worker's memory tighter, higher starts threads less often"),
  SANDBOX_THREAD_IDLE_SECONDS: variable(z.coerce.number().int().min(1).max(86_400).default(60), "Seconds a sandbox thread may wait for work before it is ended (an idle thread holds about 24 MB plus its last run's memory); the next run starts a fresh one, which takes 0.35–0.5 s"),
  RUN_MAX_CONCURRENT_PER_ACCOUNT: variable(z.coerce.number().int().min(1).max(100_000).optional(), "Runs of one account executing at once, all workers together; more stay `queued` (`waiting_for: account_run_limit`) and wait holding no slot. Unset: the account's fair share of `RUN_SLOTS` — the slots divided among the accounts with runs executing or waiting, rounded up, at least 2 — so a lone account uses every slot. Set: a fixed cap whatever the other accounts do (for tenants with long runs that must never wait behind another's; keep it below `RUN_SLOTS`)", "unset: the fair share"),
  RUN_SLOTS: variable(z.coerce.number().int().min(1).max(100_000).optional(), "Run slots of all workers together, which the fair share divides. Set it to the sum of the workers' `SANDBOX_POOL_SIZE` when you run several, or a lone account uses only one worker's worth (`npm run stack:prod` sets it to its two workers' slots unless given)", "`SANDBOX_POOL_SIZE`"),
  RUN_MAX_CONCURRENT_PER_AGENT: variable(z.coerce.number().int().min(1).max(100_000).optional(), "Runs of one agent executing at once (at most the account's fixed cap, when set)", "none"),
  SCHEDULES_PER_ACCOUNT: variable(z.coerce.number().int().min(1).max(100_000).default(100), "Schedules one account may have; one more is `BAD_USER_INPUT` naming the limit"),
  SCHEDULE_MIN_INTERVAL_SECONDS: variable(z.coerce.number().int().min(1).max(60).default(60), "Shortest `every` of a schedule (1 to 60; a cron fires at most once a minute); shorter is `BAD_USER_INPUT` on `every`"),
  SCHEDULE_FIRING_RETRY_SECONDS: variable(z.coerce.number().int().min(1).max(3600).default(900), "How long a schedule's firing retries creating its job (the database down, up to 3600) before it is recorded as missed (`Schedule.missedRuns`)"),
});
