import type { ServerResponse } from "node:http";
import { Task } from "@a2a-js/sdk";
import { toTask, type TaskView } from "./mapping.js";
import type { TaskRow } from "./store.js";

/**
 * A blocking SendMessage's answer (v1.0, either binding), written the moment the statement that
 * stores its task's end commits, as a stream's end is (stream.ts): built from that end while the
 * statement runs, so the answer leaves without the turn's own steps after the finish and the way
 * back through the SDK. The body is what the SDK writes for the same task (its own `Task.toJSON`
 * in the binding's envelope, with express's headers); whichever of the two answers comes first is
 * written, and the other finds the response under way (routes.ts, rest.ts).
 */
export interface AheadAnswer {
  res: ServerResponse;
  /** HTTP+JSON (`{ task }`, application/a2a+json) rather than JSON-RPC (`{ jsonrpc, id, result: { task } }`). */
  rest: boolean;
  /** JSON-RPC: the request's id. */
  rpcId?: string | number | null;
}

export function aheadBody(a: AheadAnswer, task: Task): string {
  const result = { task: Task.toJSON(task) };
  return JSON.stringify(a.rest ? result : { jsonrpc: "2.0", id: a.rpcId ?? null, result });
}

/** Writes the answer unless the response is under way already (or its client gone). */
export function sendAhead(a: AheadAnswer, body: string): void {
  const res = a.res;
  if (res.headersSent || res.destroyed) return;
  res.statusCode = 200;
  // As express's `res.json` writes the SDK's answer (Content-Length comes from `end`).
  res.setHeader("Content-Type", a.rest ? "application/a2a+json; charset=utf-8" : "application/json; charset=utf-8");
  res.end(body);
}

/** What a started chat task tells about its finish (chat-task.ts StartedChatTask). */
export interface FinishingTask {
  finishing?: Promise<void>;
  plannedEnd?: () => TaskRow | undefined;
  endStored?: Promise<boolean>;
}

/**
 * Writes the send's answer as soon as its turn's finish commits: built from the end that statement
 * stores (`plannedEnd`, the row the send returns after it) in the turn after the statement leaves,
 * so its send is not delayed. A finish that fails or settles nothing writes nothing (the send's own
 * answer follows); an end replaced meanwhile (a client's context that could not be recorded) is
 * built again. Returns the task built for a row, if it was (the send returns it instead of
 * building it again).
 */
export function answerOnCommit(ahead: AheadAnswer, t: FinishingTask, view: TaskView): (row: TaskRow) => Task | undefined {
  const { finishing, plannedEnd, endStored } = t;
  let built: { row: TaskRow; task: Task; body: string } | undefined;
  const builtFor = (row: TaskRow) => (built?.row === row ? built.task : undefined);
  if (!finishing || !plannedEnd || !endStored) return builtFor;
  const build = () => {
    const row = plannedEnd();
    if (row && built?.row !== row) {
      const task = toTask(row, view);
      built = { row, task, body: aheadBody(ahead, task) };
    }
    return built;
  };
  void finishing.then(() => setImmediate(build));
  endStored.then(
    (stored) => {
      const answer = stored ? build() : undefined;
      if (answer) sendAhead(ahead, answer.body);
    },
    () => {},
  );
  return builtFor;
}
