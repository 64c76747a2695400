import { isDeepStrictEqual } from "node:util";
import { isReply, type HttpsClient, type Outcome, type Reply } from "./client.js";
import { newTally, record, type Tally } from "./load.js";

/**
 * The chaos suite's runs that ask (`ctx.ask`, issue 29): each run calls the model once (a
 * journaled step), then asks, and returns the answer. Each is answered twice at once, by GraphQL
 * `answerJobInput` and by its answer URL, through the balancer while instances die; a client
 * retries an answer whose request failed in transport, as a real one would. The verdict is per run:
 * exactly one answer won, the result is that answer, the step before the ask ran once.
 */
export const ASK_SCRIPT = `export default async function run(input, ctx) {
  const r = await ctx.chat({ messages: [{ role: "user", content: "ask " + input.n + "." }] });
  const answer = await ctx.ask({
    prompt: "Which channel answers run " + input.n + "?",
    schema: { type: "object", properties: { via: { type: "string", enum: ["graphql", "answer_url"] }, n: { type: "integer" } }, required: ["via", "n"], additionalProperties: false },
  });
  return { n: input.n, reply: r.content, answer };
}`;

/** What the model call of run `n` carries, to count the upstream calls of that step. */
export const askChatMarker = (n: number) => `"ask ${n}."`;

export type Channel = "graphql" | "answer_url";

export interface AskingRun {
  jobId: string;
  n: number;
  /** From the job's status (`input_request.answer_url`): the balancer's URL, with the token. */
  answerUrl: string;
}

/** The value a channel sends for a run: it names the channel, so the run's result tells which answer won. */
export const answerOf = (via: Channel, n: number) => ({ via, n });

export interface AnswerOutcome {
  via: Channel;
  /** accepted: 200 / no GraphQL error; refused: 409 / CONFLICT input_already_answered; gave-up: still failing after 120 s. */
  outcome: "accepted" | "refused" | "unexpected" | "gave-up";
  attempts: number;
  /** Attempts that got no answer from the service (connection cut, the balancer's 502/504): they may have been applied. */
  lostResponses: number;
  last: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const summary = (o: Outcome) => (isReply(o) ? `${o.status} ${o.text.slice(0, 200)}` : o.failure);

/** What a reply the service gave means for the answer; `unavailable`: refused before anything was done, send again. */
function verdict(via: Channel, jobId: string, o: Outcome): AnswerOutcome["outcome"] | "unavailable" {
  try {
    return isReply(o) ? verdictOf(via, jobId, o) : "unexpected";
  } catch {
    return "unexpected"; // not JSON: the service always answers JSON
  }
}

function verdictOf(via: Channel, jobId: string, o: Reply): AnswerOutcome["outcome"] | "unavailable" {
  if (via === "answer_url") {
    if (o.status === 200 && o.json().job_id === jobId) return "accepted";
    return o.status === 409 && o.json().error?.code === "input_already_answered" ? "refused" : "unexpected";
  }
  const body = o.json();
  if (!body.errors) return body.data?.answerJobInput?.id === jobId ? "accepted" : "unexpected";
  const ext = body.errors[0]?.extensions ?? {};
  if (ext.reason === "input_already_answered") return "refused";
  return ext.code === "SERVICE_UNAVAILABLE" ? "unavailable" : "unexpected";
}

/** The two answer channels of a client of the balancer, with the tally of every HTTP attempt. */
export function askAnswerer(client: HttpsClient, apiUrl: string, admin: string) {
  const tally: Tally = newTally();
  const send = (via: Channel, run: AskingRun) =>
    via === "graphql"
      ? client.send(`${apiUrl}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
          body: JSON.stringify({ query: `mutation($j: ID!, $v: JSON!) { answerJobInput(jobId: $j, value: $v) { id } }`, variables: { j: run.jobId, v: answerOf(via, run.n) } }),
        })
      : client.send(run.answerUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(answerOf(via, run.n)) });

  async function answer(via: Channel, run: AskingRun): Promise<AnswerOutcome> {
    const out: AnswerOutcome = { via, outcome: "gave-up", attempts: 0, lostResponses: 0, last: "" };
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const o = await send(via, run);
      out.attempts++;
      out.last = summary(o);
      const kind = record(tally, o, via === "graphql" ? [200] : [200, 409]);
      const v = kind === "ok" ? verdict(via, run.jobId, o) : kind === "unexpected" ? "unexpected" : "unavailable";
      if (v !== "unavailable") return { ...out, outcome: v };
      if (kind === "in-flight") out.lostResponses++;
      await sleep(kind === "in-flight" ? 200 : 500);
    }
    return out;
  }

  return {
    tally,
    /** Both channels at once; resolves when each has its final outcome. */
    answerTwice: (run: AskingRun) => Promise.all([answer("graphql", run), answer("answer_url", run)]),
  };
}

/**
 * Answers every run by both channels, one run every 250 ms but five at once just before each fault.
 * A third of the way in, `faults[0]` (a worker) half a second after the burst, while the runs it
 * answered resume; two thirds in, once that one is back, `faults[1]` (an API instance) 20 ms after
 * the burst, with answers in flight on it, and the rest are answered while it restarts. `fault`
 * kills the named process and resolves once it serves again. Returns each run's two outcomes.
 */
export async function answerThroughFaults(
  runs: AskingRun[],
  answerer: ReturnType<typeof askAnswerer>,
  faults: [string, string],
  fault: (name: string) => Promise<void>,
): Promise<Map<string, AnswerOutcome[]>> {
  const [workerAt, apiAt] = [Math.floor(runs.length / 3), Math.floor((2 * runs.length) / 3)];
  let faulting = Promise.resolve();
  const answered: Promise<[AnswerOutcome, AnswerOutcome]>[] = [];
  for (const [i, run] of runs.entries()) {
    if (i === apiAt - 4) await faulting; // one fault at a time
    answered.push(answerer.answerTwice(run));
    if (i === workerAt) {
      await sleep(500);
      faulting = fault(faults[0]);
    }
    if (i === apiAt) {
      await sleep(20);
      faulting = fault(faults[1]);
    }
    const burst = (i >= workerAt - 4 && i < workerAt) || (i >= apiAt - 4 && i < apiAt);
    await sleep(burst ? 5 : 250);
  }
  await faulting;
  return new Map((await Promise.all(answered)).map((pair, i): [string, AnswerOutcome[]] => [runs[i]!.jobId, pair]));
}

/** What the database holds of an asking run (inspect.ts `askedRuns`). */
export interface AskedRunRow {
  id: string;
  status: string;
  result: { n?: number; reply?: string; answer?: unknown } | null;
  requests: number;
  answeredVia: string | null;
  chatExecutions: number;
  holds: number;
  releases: number;
}

export interface AskFigures {
  runs: number;
  done: number;
  /** Asking runs not done at the end (failed, or still queued, running or waiting). */
  unfinished: number;
  /** Answers sent (two per run), the HTTP attempts they took, and answers sent more than once. */
  answersSent: number;
  attempts: number;
  retried: number;
  accepted: number;
  refused: number;
  /** Any other outcome (or still failing after 120 s): must stay 0. */
  otherOutcomes: number;
  /** Attempts without an answer from the service (connection cut, the balancer's 502/504). */
  lostResponses: number;
  /** Runs whose winning answer was applied while its response was lost: its retry saw 409. */
  appliedUnseen: number;
  /** Runs failing any check below, with what failed. */
  wrong: { jobId: string; n: number; problems: string[] }[];
  /** Runs whose step before the ask ran more than once (upstream calls, journal executions, or ledger holds and their settlements). */
  stepRepeated: number;
  /** Runs with other than one agentRun execution in Temporal's visibility. */
  executionsNotOne: number;
  balanceWhileWaiting: string;
  balanceAfter: string;
}

export interface AskEvidence {
  runs: AskingRun[];
  outcomes: Map<string, AnswerOutcome[]>;
  rows: AskedRunRow[];
  upstreamCalls: (n: number) => number;
  executions: Map<string, number>;
  balanceWhileWaiting: string;
  balanceAfter: string;
}

/** Why one run is wrong (empty: right): one winner, the result is its answer, one model call, one execution. */
function judge(run: AskingRun, outcomes: AnswerOutcome[], row: AskedRunRow | undefined, e: AskEvidence): string[] {
  if (!row) return ["no job row"];
  const problems: string[] = [];
  if (row.status !== "done") problems.push(`status ${row.status}`);
  const answer = row.result?.answer as { via?: Channel } | undefined;
  const winner = outcomes.find((o) => o.via === answer?.via);
  if (!winner || !isDeepStrictEqual(answer, answerOf(winner.via, run.n))) problems.push(`result ${JSON.stringify(row.result)} is none of the answers sent`);
  if (row.result?.n !== run.n || row.result?.reply !== "Hello from B") problems.push(`result ${JSON.stringify(row.result)} is not run ${run.n}'s`);
  const accepted = outcomes.filter((o) => o.outcome === "accepted");
  if (outcomes.some((o) => o.outcome !== "accepted" && o.outcome !== "refused")) problems.push(`answers ended ${outcomes.map((o) => `${o.via}: ${o.outcome} (${o.last})`).join(", ")}`);
  else if (accepted.length > 1) problems.push("both answers accepted");
  else if (accepted.length === 1 && accepted[0]!.via !== winner?.via) problems.push(`${accepted[0]!.via} accepted, but the run resumed with another answer`);
  else if (accepted.length === 0 && !(winner && winner.lostResponses > 0)) problems.push("both answers refused, and the winner's response was never lost");
  if (row.requests !== 1 || row.answeredVia !== winner?.via) problems.push(`${row.requests} input requests, answered via ${row.answeredVia}`);
  const calls = e.upstreamCalls(run.n);
  if (calls !== 1 || row.chatExecutions !== 1 || row.holds !== 1 || row.releases !== 1) {
    problems.push(`step before the ask: ${calls} upstream calls, ${row.chatExecutions} executions, ledger ${row.holds} holds / ${row.releases} settlements`);
  }
  if (e.executions.get(run.jobId) !== 1) problems.push(`${e.executions.get(run.jobId) ?? 0} agentRun executions`);
  return problems;
}

export function askFigures(e: AskEvidence): AskFigures {
  const rowById = new Map(e.rows.map((r) => [r.id, r]));
  const all = [...e.outcomes.values()].flat();
  const wrong = e.runs
    .map((run) => ({ jobId: run.jobId, n: run.n, problems: judge(run, e.outcomes.get(run.jobId) ?? [], rowById.get(run.jobId), e) }))
    .filter((w) => w.problems.length > 0);
  return {
    runs: e.runs.length,
    done: e.rows.filter((r) => r.status === "done").length,
    unfinished: e.runs.length - e.rows.filter((r) => r.status === "done").length,
    answersSent: all.length,
    attempts: all.reduce((n, o) => n + o.attempts, 0),
    retried: all.filter((o) => o.attempts > 1).length,
    accepted: all.filter((o) => o.outcome === "accepted").length,
    refused: all.filter((o) => o.outcome === "refused").length,
    otherOutcomes: all.filter((o) => o.outcome !== "accepted" && o.outcome !== "refused").length,
    lostResponses: all.reduce((n, o) => n + o.lostResponses, 0),
    appliedUnseen: e.runs.filter((run) => {
      const pair = e.outcomes.get(run.jobId) ?? [];
      return pair.length > 0 && pair.every((o) => o.outcome === "refused");
    }).length,
    wrong,
    stepRepeated: e.runs.filter((run) => {
      const r = rowById.get(run.jobId);
      return e.upstreamCalls(run.n) !== 1 || r?.chatExecutions !== 1 || r?.holds !== 1 || r?.releases !== 1;
    }).length,
    executionsNotOne: e.runs.filter((run) => e.executions.get(run.jobId) !== 1).length,
    balanceWhileWaiting: e.balanceWhileWaiting,
    balanceAfter: e.balanceAfter,
  };
}
