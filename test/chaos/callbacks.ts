import { Webhook } from "standardwebhooks";
import type { Callback } from "../helpers/callback-receiver.js";

/**
 * The chaos suite's view of completion callbacks: what the receiver got for the terminal jobs of
 * the load's trigger. A request counts once its Standard Webhooks signature verified (checked on
 * arrival, while its timestamp is within the library's 5-minute tolerance) and it carried a
 * parseable event naming its job.
 */
export interface CallbackFigures {
  /** Terminal jobs of the trigger: each must be delivered. */
  expected: number;
  /** Jobs with at least one request the receiver acknowledged with a 2xx. */
  delivered: number;
  lost: number;
  /** 2xx-acknowledged requests beyond the first per job (at-least-once redeliveries, same webhook-id). */
  duplicateDeliveries: number;
  /** Every request the receiver got (attempts), and those it answered 500. */
  attempts: number;
  receiverErrors: number;
  /** Requests whose signature did not verify. */
  unverified: number;
  /** Jobs whose requests carried more than one webhook-id, and webhook-ids seen for more than one job. */
  jobsWithSeveralIds: number;
  idsWithSeveralJobs: number;
  /** Requests for jobs that are not terminal jobs of the trigger. */
  strays: number;
}

export interface ReceivedCallback {
  webhookId: string;
  jobId: string | null;
  verified: boolean;
  status?: number;
}

/** Verifies one request as it arrives (the receiver's onRequest hook). */
export function inspectCallback(secret: string, c: Callback): ReceivedCallback {
  const webhookId = String(c.headers["webhook-id"] ?? "");
  try {
    const event = new Webhook(secret).verify(c.body, c.headers as Record<string, string>) as { data?: { job_id?: string } };
    return { webhookId, jobId: event.data?.job_id ?? null, verified: true };
  } catch {
    let jobId: string | null = null;
    try {
      jobId = (JSON.parse(c.body) as { data?: { job_id?: string } }).data?.job_id ?? null;
    } catch {
      /* not JSON: counted as unverified, job unknown */
    }
    return { webhookId, jobId, verified: false };
  }
}

export const acknowledged = (r: ReceivedCallback) => r.verified && r.status !== undefined && r.status >= 200 && r.status < 300;

export function callbackFigures(received: ReceivedCallback[], terminalJobIds: string[]): CallbackFigures & { lostJobIds: string[] } {
  const byJob = new Map<string, ReceivedCallback[]>();
  const jobsById = new Map<string, Set<string>>();
  for (const r of received) {
    if (r.jobId) byJob.set(r.jobId, [...(byJob.get(r.jobId) ?? []), r]);
    const jobs = jobsById.get(r.webhookId) ?? new Set<string>();
    jobs.add(r.jobId ?? "?");
    jobsById.set(r.webhookId, jobs);
  }
  const terminal = new Set(terminalJobIds);
  const lostJobIds = terminalJobIds.filter((id) => !(byJob.get(id) ?? []).some(acknowledged));
  return {
    expected: terminalJobIds.length,
    delivered: terminalJobIds.length - lostJobIds.length,
    lost: lostJobIds.length,
    lostJobIds,
    duplicateDeliveries: [...byJob.values()].reduce((n, rs) => n + Math.max(0, rs.filter(acknowledged).length - 1), 0),
    attempts: received.length,
    receiverErrors: received.filter((r) => r.status === 500).length,
    unverified: received.filter((r) => !r.verified).length,
    jobsWithSeveralIds: [...byJob.values()].filter((rs) => new Set(rs.map((r) => r.webhookId)).size > 1).length,
    idsWithSeveralJobs: [...jobsById.values()].filter((jobs) => jobs.size > 1).length,
    strays: received.filter((r) => !r.jobId || !terminal.has(r.jobId)).length,
  };
}
