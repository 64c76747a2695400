import { z } from "zod";
import { area, variable } from "../variable.js";

/** The configuration variables of the area "Outbound deliveries". */
export const outboundArea = area("Outbound deliveries", "Completion callbacks and A2A push notifications: retries, timeouts, concurrency.", {
  OUTBOUND_RETRY_SCHEDULE: variable(z
    .string()
    .trim()
    .default("5,300,1800,7200,18000,36000,36000")
    .transform((v, ctx) => {
      const gaps = v === "" ? [] : v.split(",").map((s) => Number(s.trim()));
      if (gaps.length > 50 || gaps.some((g) => !Number.isFinite(g) || g < 0 || g > 7 * 86_400)) {
        ctx.addIssue({ code: "custom", message: "must be at most 50 comma-separated numbers of seconds, each 0 to 604800, e.g. 5,300,1800" });
        return z.NEVER;
      }
      return gaps;
    }), "Seconds between the attempts of an outbound delivery (completion callbacks); its length + 1 attempts, each gap ±10 % jitter (Svix's schedule: about 27 hours)"),
  OUTBOUND_CONNECT_TIMEOUT_MS: variable(z.coerce.number().int().min(100).max(60_000).default(5_000), "An outbound attempt must have its connection (TLS included) within this"),
  OUTBOUND_TIMEOUT_MS: variable(z.coerce.number().int().min(100).max(300_000).default(15_000), "An outbound attempt must have its whole answer within this, else it failed"),
  OUTBOUND_MAX_RESPONSE_BYTES: variable(z.coerce.number().int().min(0).max(1024 * 1024).default(64 * 1024), "An outbound attempt reads at most this much of the response body, then closes the connection"),
  OUTBOUND_CONCURRENCY: variable(z.coerce.number().int().min(1).max(1000).default(100), "Outbound attempts one worker runs at once (slots of their own, apart from the runs')"),
  OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT: variable(z.coerce.number().int().min(1).max(100_000).default(10), "Outbound attempts of one account in flight at once, across all workers; its other deliveries wait (a durable timer, no slot held), so one account's slow or hanging targets cannot take every slot from another's callbacks"),
  OUTBOUND_MAX_PENDING_RESENDS: variable(z.coerce.number().int().min(1).max(1000).default(5), "Pending delivery cycles of one job's event (`redeliver`) or pending test events of one trigger (`sendTestCallback`); one more is refused with `RATE_LIMITED` until they are delivered or failed"),
  OUTBOUND_STUCK_GRACE_MS: variable(z.coerce.number().int().min(500).max(86_400_000).default(300_000), "A pending delivery with no attempt for the longest gap of `OUTBOUND_RETRY_SCHEDULE` + one attempt's time + this is checked on Temporal; if its workflow is no longer running, the delivery is failed with why"),
});
