import { Message, Role, TaskState, type Artifact, type Part, type Task } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError } from "@a2a-js/sdk/errors";
import { AppError } from "../errors/app-error.js";
import type { TaskRow, TaskStateName } from "./store.js";

/** Between A2A's shapes (the SDK's protobuf types) and the gateway's: parts in, tasks out. */

const STATES: Record<TaskStateName, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
};

export function stateName(state: TaskState): TaskStateName | undefined {
  return (Object.keys(STATES) as TaskStateName[]).find((k) => STATES[k] === state);
}

export const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" });
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** A data part's value is an object (v0.3 requires one): other JSON values travel as `{ "result": value }`. */
export const dataPart = (value: unknown): Part => ({ content: { $case: "data", value: isPlainObject(value) ? value : { result: value } }, metadata: undefined, filename: "", mediaType: "application/json" });

function agentMessage(taskId: string, contextId: string, suffix: string, parts: Part[]): Message {
  return { messageId: `${taskId}-${suffix}`, contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/**
 * A chat turn's user message as the chat API takes it (then validated by the chat API's own
 * parser): text parts are text, data parts JSON text, image files image input.
 */
export function chatContent(message: Message): { type: "text"; text: string }[] | ({ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } })[] {
  return message.parts.map((p, i) => {
    const c = p.content;
    if (!c) throw new AppError("validation_failed", `message.parts[${i}] has no content`, { param: `message.parts[${i}]` });
    if (c.$case === "text") return { type: "text" as const, text: c.value };
    if (c.$case === "data") return { type: "text" as const, text: JSON.stringify(c.value ?? null) };
    if (!p.mediaType.startsWith("image/")) throw new ContentTypeNotSupportedError(`message.parts[${i}]: only text, data and image parts are supported (got ${p.mediaType || "a file without mediaType"})`);
    const url = c.$case === "url" ? c.value : `data:${p.mediaType};base64,${Buffer.from(c.value).toString("base64")}`;
    return { type: "image_url" as const, image_url: { url } };
  });
}

/** An automation run's payload: a data part is the payload; text alone becomes `{ "text": … }`. */
export function jobPayload(message: Message): unknown {
  const parts = message.parts.map((p, i) => {
    const c = p.content;
    if (!c) throw new AppError("validation_failed", `message.parts[${i}] has no content`, { param: `message.parts[${i}]` });
    if (c.$case !== "text" && c.$case !== "data") throw new ContentTypeNotSupportedError(`message.parts[${i}]: an automation agent takes text and data parts`);
    return c;
  });
  const data = parts.filter((c) => c.$case === "data");
  const text = parts.filter((c) => c.$case === "text").map((c) => c.value as string);
  if (data.length === 0) return { text: text.join("\n") };
  if (data.length === 1 && text.length === 0) return data[0]!.value ?? null;
  return { ...(text.length ? { text: text.join("\n") } : {}), data: data.map((c) => c.value ?? null) };
}

/** The user message as a task keeps it: a job task keeps none of its parts (retention purges the payload, not this copy). */
export function storedRequest(message: Message, keepParts: boolean): Record<string, unknown> {
  const json = Message.toJSON(keepParts ? message : { ...message, parts: [] }) as Record<string, unknown>;
  return json;
}

export interface TaskView {
  historyLength?: number | undefined;
  includeArtifacts?: boolean;
  /** The user message as the request carried it, already parsed: spares parsing the stored copy. */
  user?: Message;
}

/** A task's status as stored: a failed or canceled task's error is the status message. */
export function taskStatus(row: TaskRow): Task["status"] {
  const failed = row.state === "failed" || row.state === "canceled";
  // A question: its prompt, and its JSON Schema as a data part, so a client can build the answer.
  const ask = row.state === "input-required" && row.inputRequest ? row.inputRequest : undefined;
  return {
    state: STATES[row.state],
    message: ask
      ? agentMessage(row.id, row.contextId, "input", [textPart(ask.prompt), ...(ask.schema ? [dataPart({ schema: ask.schema })] : [])])
      : failed && row.error
        ? agentMessage(row.id, row.contextId, "status", [textPart(row.error)])
        : undefined,
    timestamp: new Date(row.statusAt).toISOString(),
  };
}

/** A chat task's answer as its artifact (none before the answer). */
export const answerArtifact = (answer: string): Artifact => ({ artifactId: "answer", name: "answer", description: "", parts: [textPart(answer)], metadata: undefined, extensions: [] });

/** The A2A Task of a stored record. */
export function toTask(row: TaskRow, view: TaskView = {}): Task {
  const user = view.user ? { ...view.user } : Message.fromJSON(row.request ?? {});
  user.taskId = row.id;
  user.contextId = row.contextId;
  if (row.kind === "job" && row.payload !== null && row.payload !== undefined && user.parts.length === 0) user.parts = [dataPart(row.payload)];
  const history: Message[] = [user];
  const artifacts: Artifact[] = [];
  if (row.kind === "chat" && row.answer !== null) {
    history.push(agentMessage(row.id, row.contextId, "answer", [textPart(row.answer)]));
    artifacts.push(answerArtifact(row.answer));
  }
  if (row.kind === "job" && row.state === "completed") {
    artifacts.push({ artifactId: "result", name: "result", description: "", parts: [dataPart(row.result ?? null)], metadata: undefined, extensions: [] });
  }
  const n = view.historyLength;
  return {
    id: row.id,
    contextId: row.contextId,
    status: taskStatus(row),
    artifacts: view.includeArtifacts === false ? [] : artifacts,
    history: n === undefined ? history : n <= 0 ? [] : history.slice(-n),
    metadata: undefined,
  };
}
