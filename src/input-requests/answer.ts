import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";
import { INPUT_ANSWERED_SIGNAL } from "../../workflows/contract.js";
import { checkAnswer } from "./schema.js";
import { latestRequestOfJob, recordAnswer, requestById, type InputRequestRow } from "./store.js";
import { tokenMatches } from "./token.js";

/** How an answer came: recorded with it (`answered_via`). */
export type AnswerChannel = "graphql" | "answer_url";

const SIGNAL_TRIES = 3;

/**
 * Tells the run's workflow its question was answered. The answer is committed first, so a signal
 * that never arrives (Temporal unreachable, this process dying) delays the run but loses nothing:
 * the workflow re-reads the question's state on a backing-off timer (workflows/agent-run.ts).
 * Retried a few times here, never thrown; the log carries ids only.
 */
async function signalAnswered(runtime: Runtime, jobId: string, requestId: string): Promise<void> {
  for (let attempt = 1; attempt <= SIGNAL_TRIES; attempt++) {
    try {
      await runtime.temporal.client.workflow.getHandle(jobId).signal(INPUT_ANSWERED_SIGNAL, requestId);
      return;
    } catch (err) {
      if (attempt === SIGNAL_TRIES) runtime.log.warn({ err: String(err), jobId, requestId }, "could not signal the answer; the run's periodic check will find it");
      else await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

/** Why a question cannot take an answer now, as the error each channel reports. */
function closedError(row: InputRequestRow): AppError {
  const details = { input_request_id: row.id, job_id: row.jobId };
  if (row.status === "answered") return new AppError("input_already_answered", "This input request was already answered", { details });
  if (row.status === "timed_out" || new Date(row.expiresAt).getTime() <= Date.now()) {
    return new AppError("input_request_expired", "This input request expired before it was answered", { details });
  }
  return new AppError("input_request_expired", `This input request is closed: its job is ${row.jobStatus}`, { details: { ...details, job_status: row.jobStatus } });
}

/** Validates and records an answer to a pending question (first valid answer wins), then wakes the run. */
async function answer(runtime: Runtime, row: InputRequestRow, value: unknown, via: AnswerChannel): Promise<string> {
  if (row.status !== "pending" || row.jobStatus !== "input_required") throw closedError(row);
  checkAnswer(row.schema, value);
  const jobId = await recordAnswer(runtime.pool, row.id, value, via);
  if (!jobId) {
    // Another answer (or the expiry, or the job's end) came first: say which.
    const now = await requestById(runtime.pool, row.id);
    throw closedError(now ?? { ...row, status: "answered" });
  }
  await signalAnswered(runtime, jobId, row.id);
  return jobId;
}

/** answerJobInput: the account's admin answers the question its job waits on. Returns the job id. */
export async function answerJobInput(runtime: Runtime, accountId: string, jobId: string, value: unknown): Promise<string> {
  const row = await latestRequestOfJob(runtime.pool, jobId);
  if (!row || row.accountId !== accountId) {
    throw new AppError("input_not_required", `Job ${jobId} does not wait for input`, { param: "jobId" });
  }
  if (row.status === "pending" && row.jobStatus !== "input_required") {
    throw new AppError("input_not_required", `Job ${jobId} does not wait for input (it is ${row.jobStatus})`, { param: "jobId", details: { status: row.jobStatus } });
  }
  return answer(runtime, row, value, "graphql");
}

/**
 * The answer URL: the token is the only credential. An unknown request and a wrong token answer
 * alike (404), so neither ids nor tokens can be probed.
 */
export async function answerByToken(runtime: Runtime, requestId: string, token: string, value: unknown): Promise<string> {
  const row = /^inp_[0-9A-Za-z]{1,64}$/.test(requestId) ? await requestById(runtime.pool, requestId) : undefined;
  if (!row || !token || !tokenMatches(token, row.tokenHash)) throw new AppError("input_request_not_found", "Input request not found");
  return answer(runtime, row, value, "answer_url");
}
