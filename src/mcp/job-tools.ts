import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { callerOf } from "./auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { jobPayloadText, startAgentJob } from "../agent-jobs/start.js";
import { consumeRateLimit } from "../chat/rate-limit.js";
import { AppError } from "../errors/app-error.js";
import { getJob, type JobRow } from "../jobs/store.js";
import { waitForJob } from "../jobs/wait.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { toolError, toolErrorFrom, toolSuccess } from "./tool-result.js";

/**
 * `run` and `get_job` on an automation agent. `run` starts a job through the one ingest path
 * (startAgentJob: the webhook's group commit and dispatcher; jobs.source = mcp) and follows it on
 * the job event bus, so any API instance can wait for a job any worker runs. Each call counts once
 * in the key's rate-limit window, as a chat request does.
 */

export const DEFAULT_WAIT_SECONDS = 60;
/** Under the balancer's 300 s idle timeouts; the SDK's SSE keep-alive comments run meanwhile. */
export const MAX_WAIT_SECONDS = 290;

const STATUSES = ["queued", "running", "input_required", "done", "failed"] as const;

// Built once: the servers are per request, their schemas need not be.
const jobOutput = {
  job_id: z.string(),
  status: z.enum(STATUSES),
  result: z.unknown().optional().describe("The script's result, when done"),
  error: z.string().optional().describe("Why it failed, when failed"),
};

const RUN_INPUT = {
  input: z.record(z.string(), z.unknown()).describe("The run's input (the script's `input`), a JSON object"),
  wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).optional().describe(`How long to wait for the result (default ${DEFAULT_WAIT_SECONDS})`),
  idempotency_key: z.string().min(1).max(255).optional().describe("The same key within 24 hours returns the first run instead of starting another"),
};
const GET_JOB_INPUT = { job_id: z.string().min(1).max(255).describe("The job_id that run answered") };

/** A job as the tools answer it: done → result, failed → isError with the job's error. */
function jobResult(job: JobRow): CallToolResult {
  const base = { job_id: job.id, status: job.status };
  if (job.status === "done") return toolSuccess(JSON.stringify(job.result ?? null), { ...base, result: job.result ?? null });
  if (job.status === "failed") return toolError(`job ${job.id} failed: ${job.error ?? "unknown error"}`, { ...base, error: job.error ?? "unknown error" });
  return toolSuccess(`job ${job.id} is ${job.status}; call get_job with this job_id for its result`, base);
}

/** This agent's job, or job_not_found (another agent's or account's job is not found either). */
async function agentJob(runtime: Runtime, principal: KeyPrincipal, jobId: string): Promise<JobRow> {
  const job = await getJob(runtime.pool, jobId);
  if (!job || job.accountId !== principal.agent.accountId || job.agentId !== principal.agent.id) throw new AppError("job_not_found", `Job ${jobId} not found`);
  return job;
}

export function registerJobTools(server: McpServer, runtime: Runtime, agentName: string): void {
  const countRequest = (principal: KeyPrincipal) => consumeRateLimit(runtime.pool, principal.keyId, principal.rateLimitPerMinute);

  server.registerTool(
    "run",
    {
      title: `Run ${agentName}`,
      description:
        `Start a run of the automation agent "${agentName}" with a JSON input and wait up to wait_seconds ` +
        `(default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}) for its result. Progress notifications carry the job's status. ` +
        "If the run is still going when the wait ends, call get_job with the job_id later.",
      inputSchema: RUN_INPUT,
      outputSchema: jobOutput,
      annotations: { title: `Run ${agentName}`, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ input, wait_seconds, idempotency_key }, extra) => {
      const principal = callerOf(extra);
      try {
        const payloadText = jobPayloadText(input, "input");
        await countRequest(principal);
        const started = await startAgentJob(runtime, {
          accountId: principal.agent.accountId,
          agentId: principal.agent.id,
          source: "mcp",
          payloadText,
          idempotencyKey: idempotency_key ?? null,
        });
        const token = extra._meta?.progressToken;
        let progress = 0;
        await waitForJob(runtime, principal.agent.accountId, started.jobId, {
          until: new Date(Date.now() + (wait_seconds ?? DEFAULT_WAIT_SECONDS) * 1000),
          signal: extra.signal,
          onStatus: async (event) => {
            if (token === undefined) return;
            progress += 1;
            await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message: event.status } }).catch(() => {});
          },
        });
        // The row has the result (and may be further along than the last event seen).
        return jobResult(await agentJob(runtime, principal, started.jobId));
      } catch (err) {
        return toolErrorFrom(err, runtime.log);
      }
    },
  );

  server.registerTool(
    "get_job",
    {
      title: `A run of ${agentName}`,
      description: `The status of a run of "${agentName}" started with run, and its result or error once it has ended.`,
      inputSchema: GET_JOB_INPUT,
      outputSchema: jobOutput,
      annotations: { title: `A run of ${agentName}`, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ job_id }, extra) => {
      const principal = callerOf(extra);
      try {
        await countRequest(principal);
        return jobResult(await agentJob(runtime, principal, job_id));
      } catch (err) {
        return toolErrorFrom(err, runtime.log);
      }
    },
  );
}
