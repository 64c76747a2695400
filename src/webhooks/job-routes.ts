import express, { type Request, type Response } from "express";
import { authenticateAdminToken } from "../accounts/admin-tokens.js";
import { AppError } from "../errors/app-error.js";
import { sendError } from "../errors/http.js";
import { bearerToken, headerValue, requireHttps } from "../http/auth.js";
import type { RouteModule } from "../http/server.js";
import { formatUsd } from "../infra/money.js";
import { getJob, type JobRow } from "../jobs/store.js";
import { pendingInputOf } from "../input-requests/view.js";
import type { Runtime } from "../runtime/runtime.js";
import { triggerCache } from "../triggers/cache.js";
import { clock } from "../triggers/clock.js";
import { validSecrets } from "../triggers/secrets.js";
import { sharedSecretMatches } from "./auth.js";

const notFound = () => new AppError("job_not_found", "Job not found");

/**
 * The job endpoints (docs/guides/webhooks.md) live with webhook authentication: they accept the same trigger
 * secrets. Loads a job for a caller holding either the job's trigger secret (current or in grace) or the
 * owning account's admin token. Anything else answers exactly like an unknown job.
 */
async function authorizedJob(runtime: Runtime, req: Request): Promise<JobRow> {
  requireHttps(runtime.config.allowInsecureHttp, req);
  const id = String(req.params.id);
  if (!/^job_[0-9A-Za-z]{1,64}$/.test(id)) throw notFound();
  const job = await getJob(runtime.pool, id);
  if (!job) throw notFound();
  const secret = headerValue(req.headers, "x-trigger-secret");
  if (secret !== undefined && job.triggerId) {
    const trigger = await triggerCache(runtime).get(job.triggerId);
    if (trigger && sharedSecretMatches(secret, validSecrets(trigger.secrets, clock.now()))) return job;
  }
  const token = bearerToken(req.headers.authorization);
  if (token?.startsWith("adm_")) {
    const accountId = await authenticateAdminToken(runtime.pool, token);
    if (accountId === job.accountId) return job;
  }
  throw notFound();
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** `inputRequest`: while the job is input_required, the question it waits on (input-requests/view.ts). */
export function statusBody(job: JobRow, inputRequest?: Record<string, unknown>): Record<string, unknown> {
  return {
    job_id: job.id,
    status: job.status,
    created_at: iso(job.createdAt),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    attempts: job.attempts,
    // Why a queued run has not begun: its account's (or agent's) run limit is taken.
    ...(job.status === "queued" && job.waitingFor ? { waiting_for: job.waitingFor } : {}),
    ...(job.status === "failed" ? { error: job.error } : {}),
    ...(inputRequest ? { input_request: inputRequest } : {}),
  };
}

export const jobRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  const handle = (fn: (job: JobRow, res: Response) => void | Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(await authorizedJob(runtime, req), res);
    } catch (err) {
      if (err instanceof AppError) return sendError(req, res, err);
      throw err;
    }
  };

  router.get(
    "/api/agent-run-jobs/:id/status",
    handle(async (job, res) => {
      res.json(statusBody(job, await pendingInputOf(runtime, job)));
    }),
  );

  router.get(
    "/api/agent-run-jobs/:id/result",
    handle((job, res) => {
      if (job.status === "done") {
        res.json({ job_id: job.id, status: "done", result: job.result ?? null, thread_id: job.threadId, finished_at: iso(job.finishedAt) });
      } else if (job.status === "failed") {
        res.json({ job_id: job.id, status: "failed", error: job.error, finished_at: iso(job.finishedAt) });
      } else {
        throw new AppError("job_not_finished", `Job is ${job.status}; poll /status until it is done or failed`, { details: { job_id: job.id, status: job.status } });
      }
    }),
  );

  router.get(
    "/api/runs/:id",
    handle(async (job, res) => {
      res.json({
        ...statusBody(job, await pendingInputOf(runtime, job)),
        trigger_id: job.triggerId,
        agent_id: job.agentId,
        thread_id: job.threadId,
        result: job.result ?? null,
        error: job.error,
        cost: formatUsd(job.costMicros),
        logs: job.logs ?? [],
      });
    }),
  );
  return router;
};
