import { z } from "zod";
import { jobPayloadText, startAgentJob } from "../agent-jobs/start.js";
import { consumeRateLimit } from "../chat/rate-limit.js";
import { waitForJob } from "../jobs/wait.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { inputRequired, openQuestion, resumeRound } from "./ask-round.js";
import { agentJob, jobResult } from "./job-result.js";
import { taskHandle } from "./task-shape.js";
import { toolErrorFrom } from "./tool-result.js";
import { defineTool, type ToolSpec } from "./tool-spec.js";

/**
 * `run` and `get_job` on an automation agent. `run` starts a job through the one ingest path
 * (startAgentJob: the webhook's group commit and dispatcher; jobs.source = mcp) and follows it on
 * the job event bus, so any API instance can wait for a job any worker runs. Each call counts once
 * in the key's rate-limit window, as a chat request does. On 2026-07-28, a client that declared
 * form elicitation is asked the job's questions (ctx.ask) and answers them by retrying the call
 * (ask-round.ts).
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

export const RUN_INPUT = {
  input: z.record(z.string(), z.unknown()).describe("The run's input (the script's `input`), a JSON object"),
  wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).optional().describe(`How long to wait for the result (default ${DEFAULT_WAIT_SECONDS})`),
  idempotency_key: z.string().min(1).max(255).optional().describe("The same key within 24 hours returns the first run instead of starting another"),
};
const GET_JOB_INPUT = { job_id: z.string().min(1).max(255).describe("The job_id that run answered") };

export function jobTools(runtime: Runtime, agentName: string): ToolSpec[] {
  const countRequest = (principal: KeyPrincipal) => consumeRateLimit(runtime.pool, principal.keyId, principal.rateLimitPerMinute);
  const startRun = async (principal: KeyPrincipal, payloadText: string, idempotencyKey: string | undefined) => {
    const started = await startAgentJob(runtime, {
      accountId: principal.agent.accountId,
      agentId: principal.agent.id,
      source: "mcp",
      payloadText,
      idempotencyKey: idempotencyKey ?? null,
    });
    return started.jobId;
  };

  const run = defineTool({
    name: "run",
    title: `Run ${agentName}`,
    description:
      `Start a run of the automation agent "${agentName}" with a JSON input and wait up to wait_seconds ` +
      `(default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}) for its result. Progress notifications carry the job's status. ` +
      "If the run is still going when the wait ends, call get_job with the job_id later.",
    input: RUN_INPUT,
    output: jobOutput,
    annotations: { title: `Run ${agentName}`, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    call: async ({ input, wait_seconds, idempotency_key }, { principal, signal, progress, tasks, rounds }) => {
      try {
        // A retry that carries the answer to the question this call asked (ask-round.ts), or a new run.
        const retry = rounds?.requestState ? { ...rounds, requestState: rounds.requestState } : undefined;
        const payloadText = retry ? undefined : jobPayloadText(input, "input");
        await countRequest(principal);
        const round = retry ? await resumeRound(runtime, principal, retry) : undefined;
        if (round?.kind === "ask") return round.ask;
        if (round?.kind === "declined") return jobResult(round.job);
        const jobId = round?.kind === "wait" ? round.jobId : await startRun(principal, payloadText ?? jobPayloadText(input, "input"), idempotency_key);
        // A client that can be asked stops waiting at a question; one that cannot waits on (the job waits for another channel).
        const asks = Boolean(rounds?.elicits && !tasks);
        let sent = 0;
        await waitForJob(runtime, principal.agent.accountId, jobId, {
          until: new Date(Date.now() + (wait_seconds ?? DEFAULT_WAIT_SECONDS) * 1000),
          signal,
          ...(asks ? { stopAt: "input_required" as const } : {}),
          onStatus: async (event) => {
            if (progress) await progress(++sent, event.status).catch(() => {});
          },
        });
        // The row has the result (and may be further along than the last event seen).
        const job = await agentJob(runtime, principal, jobId);
        // Not done in time, and the client takes Tasks: the job as a task (tasks.ts answers for it).
        if (tasks && (job.status === "queued" || job.status === "running" || job.status === "input_required")) return taskHandle(job);
        const question = asks ? await openQuestion(runtime, job) : undefined;
        if (question) return inputRequired(question, job.id);
        return jobResult(job);
      } catch (err) {
        return toolErrorFrom(err, runtime.log);
      }
    },
  });

  const getJob = defineTool({
    name: "get_job",
    title: `A run of ${agentName}`,
    description: `The status of a run of "${agentName}" started with run, and its result or error once it has ended.`,
    input: GET_JOB_INPUT,
    output: jobOutput,
    annotations: { title: `A run of ${agentName}`, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    call: async ({ job_id }, { principal }) => {
      try {
        await countRequest(principal);
        return jobResult(await agentJob(runtime, principal, job_id));
      } catch (err) {
        return toolErrorFrom(err, runtime.log);
      }
    },
  });

  return [run, getJob];
}
