/**
 * The jobs side of `ctx.ask` (docs/design/input-requests.md). The questions themselves (their table, tokens, answers)
 * live in src/input-requests/, above this folder: the worker hands the run an `AskHandler`.
 */

/** What an ask resolves to once the run may go on: the person's answer, or its timeout. */
export type AskOutcome = { answered: true; value: unknown } | { answered: false; timedOut: true };

/** The question a run paused on, as the workflow needs it. */
export interface AskedInput {
  requestId: string;
  /** ISO time at which the question times out. */
  expiresAt: string;
}

/**
 * Thrown by a host call when the script asked a question that is not answered yet: the request is
 * recorded (job `input_required`), so this attempt ends here and the workflow waits for the answer.
 * Not a HostCallError: the script never sees it, the run's sandbox is stopped at once.
 */
export class InputRequested extends Error {
  constructor(readonly asked: AskedInput) {
    super("The run waits for an answer to ctx.ask");
    this.name = "InputRequested";
  }
}

/**
 * Records or reads the ask at `key` of `job`: its outcome when it is answered or timed out, else
 * throws InputRequested (after recording it) or a HostCallError (bad arguments).
 */
export type AskHandler = (job: { id: string; accountId: string }, key: string, args: unknown) => Promise<AskOutcome>;
