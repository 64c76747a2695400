import type { AskHandler } from "../jobs/ask.js";
import { InputRequested } from "../jobs/ask.js";
import { newId } from "../infra/ids.js";
import type { Runtime } from "../runtime/runtime.js";
import { parseAskArgs } from "./schema.js";
import { recordAsk } from "./store.js";
import { answerToken, tokenHash } from "./token.js";

/**
 * ctx.ask on the worker (the run's host calls, jobs/script-host.ts): the arguments checked (bad
 * ones throw in the script), then the question recorded — or found, on a re-run — by its journal
 * key. Unanswered, it ends the attempt (InputRequested: the workflow waits); answered or timed
 * out, its outcome goes back to the script (and into the journal).
 */
export function askHandler(runtime: Runtime): AskHandler {
  return async (job, key, raw) => {
    const args = parseAskArgs(raw);
    const id = newId("inp");
    const row = await recordAsk(runtime.pool, {
      id,
      jobId: job.id,
      accountId: job.accountId,
      stepKey: key,
      prompt: args.prompt,
      schema: args.schema,
      tokenHash: tokenHash(answerToken(runtime.config.secretEncryptionKey, id)),
      timeoutSeconds: args.timeoutSeconds,
    });
    if (row.status === "answered") return { answered: true, value: row.answer ?? null };
    if (row.status === "timed_out") return { answered: false, timedOut: true };
    throw new InputRequested({ requestId: row.id, expiresAt: new Date(row.expiresAt).toISOString() });
  };
}
