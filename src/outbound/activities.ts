import type { Config } from "../config/config.js";
import type { DeliveryStatus } from "../db/schema.js";
import { decryptSecret } from "../infra/crypto.js";
import type { Runtime } from "../runtime/runtime.js";
import type { DeliveryPlan } from "../../workflows/contract.js";
import { createOutboundSender } from "./send.js";
import { standardWebhookHeaders } from "./sign.js";
import { claimAttemptSlot, failAbandonedDelivery, keepBody, loadDeliveryRequest, recordAttempt, type DeliveryRequestRow } from "./store.js";

/** A result larger than this is left out of a completion event; `data.result_url` points at it instead. */
export const MAX_INLINE_RESULT_BYTES = 256 * 1024;

/** The body of a job's completion event (docs/guides/webhooks.md, "Completion callbacks"). */
export function jobEventBody(row: DeliveryRequestRow, publicBaseUrl: string): unknown {
  const jobId = row.jobId!;
  const data: Record<string, unknown> = { job_id: jobId, trigger_id: row.triggerId, status: row.jobStatus };
  if (row.jobStatus === "failed") data.error = row.jobError;
  else if (row.resultTooLarge) data.result_url = `${publicBaseUrl}/api/agent-run-jobs/${jobId}/result`;
  else data.result = row.jobResult ?? null;
  return { type: `job.${row.jobStatus}`, timestamp: row.eventAt.toISOString(), data };
}

/** How long one attempt may take, all told (the activity's start-to-close, an account slot's lease). */
export function attemptTimeoutMs(outbound: Config["outbound"]): number {
  return outbound.connectTimeoutMs + outbound.timeoutMs + 10_000;
}

/**
 * What the capabilities above hand the engine: how to build an A2A push's body (src/a2a/push.ts)
 * and its headers (the config's token and authentication). Null body: the task is gone.
 */
export interface PushBuilders {
  a2aPushBody(runtime: Runtime, taskId: string, event: string, at: Date): Promise<string | null>;
  a2aPushHeaders(token: string | null, authentication: DeliveryRequestRow["pushAuthentication"]): Record<string, string>;
  /** A `job.input_required` event's body (src/input-requests/view.ts), built at each attempt; null: the request is gone or purged. */
  inputEventBody?(runtime: Runtime, row: DeliveryRequestRow): Promise<string | null>;
}

/** Activities of the `deliver` workflow (on the outbound task queue). */
export function createOutboundActivities(runtime: Runtime, push?: PushBuilders) {
  const { pool, config } = runtime;
  const send = createOutboundSender(config.egress, config.outbound);

  return {
    /** The retry schedule, as configured now (recorded in history); null when the delivery is gone or already over. */
    async beginDelivery(deliveryId: string): Promise<DeliveryPlan | null> {
      const row = await loadDeliveryRequest(pool, deliveryId, MAX_INLINE_RESULT_BYTES);
      if (!row || row.status !== "pending") return null;
      return { schedule: config.outbound.retrySchedule, attemptTimeoutMs: attemptTimeoutMs(config.outbound) };
    },

    /** The workflow could not finish the delivery (its activities kept failing): it ends failed, with why. */
    async abandonDelivery(deliveryId: string, why: string): Promise<void> {
      await failAbandonedDelivery(pool, deliveryId, why);
    },

    /**
     * One attempt: the signed POST and its record. Returns how the delivery stands afterwards:
     * `delivered` (2xx), `failed` (refused by the egress rules, no target any more, or `last`),
     * else `pending` (the workflow waits and tries again).
     *
     * `fair` (every workflow since per-account slots): the attempt first takes one of its account's
     * OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT slots, or returns `wait` without sending, and the
     * workflow sleeps and asks again; so one account's hanging targets hold at most that many of
     * the worker's OUTBOUND_CONCURRENCY slots. In the same activity: no extra round trip.
     */
    async attemptDelivery(deliveryId: string, attempt: number, last: boolean, fair?: boolean): Promise<DeliveryStatus | "wait"> {
      const row = await loadDeliveryRequest(pool, deliveryId, MAX_INLINE_RESULT_BYTES);
      if (!row) return "failed";
      if (row.status !== "pending") return row.status;
      if (fair && (await claimAttemptSlot(pool, deliveryId, config.outbound.maxConcurrentPerAccount, attemptTimeoutMs(config.outbound))) === "wait") return "wait";
      const at = new Date();
      const isPush = row.kind === "a2a_push";
      const giveUp = async (why: string) => {
        await recordAttempt(pool, deliveryId, { attempt, at, url: row.url ?? "", statusCode: null, durationMs: 0, error: why, responseBytes: 0, responseExcerpt: null }, "failed");
        return "failed" as const;
      };
      if (!row.url) return giveUp(isPush ? "the push notification config was deleted" : "the trigger has no callbackUrl any more");
      if (isPush && !push) return giveUp("this worker cannot build A2A push notifications");
      let body = row.body;
      // Purged by the retention policy: the event is not rebuilt from what is left of the job.
      if (body === null && row.jobPurged) return giveUp("the job's result was purged by the retention policy before the event was sent");
      if (row.kind === "job_input") {
        // Never kept: it holds the answer URL, whose token is stored nowhere.
        body = push?.inputEventBody ? await push.inputEventBody(runtime, row) : null;
        if (body === null) return giveUp(push?.inputEventBody ? "the input request no longer exists" : "this worker cannot build input request events");
      } else if (body === null) {
        body = isPush ? await push!.a2aPushBody(runtime, row.taskId!, row.event!, row.createdAt) : JSON.stringify(jobEventBody(row, config.publicBaseUrl));
        if (body === null) return giveUp("the task no longer exists");
        await keepBody(pool, deliveryId, body);
      }
      const secrets = row.sealedSecrets.map((s) => decryptSecret(s, config.secretEncryptionKey));
      const headers = { ...standardWebhookHeaders(secrets, row.webhookId, Math.floor(at.getTime() / 1000), body), ...(isPush ? push!.a2aPushHeaders(row.pushToken, row.pushAuthentication) : {}) };
      const outcome = await send({ url: row.url, headers, body });
      const status: DeliveryStatus = outcome.error === null ? "delivered" : outcome.refused || last ? "failed" : "pending";
      await recordAttempt(pool, deliveryId, { attempt, at, url: row.url, ...outcome }, status);
      if (status !== "delivered") runtime.log.info({ deliveryId, attempt, statusCode: outcome.statusCode, error: outcome.error, status }, "outbound attempt failed");
      return status;
    },
  };
}

export type OutboundActivities = ReturnType<typeof createOutboundActivities>;
