import { AppError } from "../errors/app-error.js";
import { answerJobInput } from "../input-requests/answer.js";
import { latestRequestOfJob, type InputRequestRow } from "../input-requests/store.js";
import type { JobRow } from "../jobs/store.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { answerOf, elicitationOf } from "./elicitation.js";
import { agentJob } from "./job-result.js";
import type { InputRequired, InputRounds } from "./tool-spec.js";

/**
 * A job's question (ctx.ask) asked of a client waiting in `run`, by MCP 2026-07-28's
 * multi-round-trip requests: `run` answers an InputRequiredResult whose input request is the
 * question as a form elicitation (elicitation.ts) and whose requestState is the job's id; the
 * client asks its user and retries the same call with the answer, which is checked and recorded
 * like every other channel's (answerJobInput: the first valid answer wins); then `run` goes on
 * waiting for the job. The requestState comes back from the client, so it is only ever a job id
 * that must be a job of the caller's agent (agentJob), as get_job's job_id is.
 */

/** The open question of a job waiting for input, if it still has one. */
export async function openQuestion(runtime: Runtime, job: JobRow): Promise<InputRequestRow | undefined> {
  if (job.status !== "input_required") return undefined;
  const q = await latestRequestOfJob(runtime.pool, job.id);
  return q?.status === "pending" ? q : undefined;
}

export function inputRequired(question: InputRequestRow, jobId: string, why?: string): InputRequired {
  const asked = why ? { ...question, prompt: `${why}\n\n${question.prompt}` } : question;
  return { resultType: "input_required", inputRequests: { [question.id]: elicitationOf(asked) }, requestState: jobId };
}

export type Round = { kind: "wait"; jobId: string } | { kind: "ask"; ask: InputRequired } | { kind: "declined"; job: JobRow };

/**
 * A retried `run`: the job it names, after its answer is applied. An invalid answer asks again
 * (the validation message above the question); a declined question ends this call with the job's
 * status (it stays waiting for another channel); an answer that lost to another channel's is
 * simply superseded.
 */
export async function resumeRound(runtime: Runtime, principal: KeyPrincipal, rounds: InputRounds & { requestState: string }): Promise<Round> {
  const job = await agentJob(runtime, principal, rounds.requestState);
  const question = await openQuestion(runtime, job);
  const response = question ? rounds.responses?.[question.id] : undefined;
  if (!question || response === undefined) return { kind: "wait", jobId: job.id };
  try {
    const answer = answerOf(question, response);
    if (!answer) return { kind: "declined", job };
    await answerJobInput(runtime, job.accountId, job.id, answer.value);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === "validation_failed") return { kind: "ask", ask: inputRequired(question, job.id, err.message) };
    if (!["input_already_answered", "input_request_expired", "input_not_required"].includes(err.code)) throw err;
  }
  return { kind: "wait", jobId: job.id };
}
