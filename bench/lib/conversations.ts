/**
 * Multi-turn rows of `npm run bench:chat`: each autocannon connection runs one conversation after
 * another, its turns as autocannon's `requests` (one per turn; the connection's context carries the
 * conversation's state and is reset when the cycle starts over, so the next cycle is a new one).
 *
 * - continuation: a conversation of `turns` turns, one user message each, then a new one;
 * - tools: a tool round trip, a question with one function tool offered, answered with a tool call,
 *   then the tool's result, answered with text.
 *
 * Where the history lives:
 * - "thread" (this gateway): turn 1 opens a thread, every later turn sends only its new message(s)
 *   and the `thread_id` of the answer before (which must come back the same);
 * - "client" (Portkey and LiteLLM, which store nothing): the client resends the whole history,
 *   the answers included, every turn (the same conversation, as their users send it).
 *
 * Every answer is checked: a non-200, or a 200 without what the turn needs (the text, the thread,
 * the tool call), is counted in `bad` and never as throughput; the rest of that conversation is
 * skipped (the connection starts a new one).
 */

export const TOOL = {
  type: "function",
  function: { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const ANSWER = "Hello from the mock upstream."; // what bench/chat-mock.ts answers
const TOOL_QUESTION = "What is the weather in Paris?";
const TOOL_RESULT = "Sunny, 21 degrees.";

type Context = Record<string, unknown> & {
  threadId?: string;
  auth?: string;
  history?: unknown[];
  callId?: string;
  broken?: boolean;
};
interface Req {
  headers: Record<string, string>;
  body?: string | Buffer;
  [k: string]: unknown;
}
export interface Step {
  setupRequest: (req: Req, context: Context) => Req | null;
  onResponse: (status: number, body: string, context: Context) => void;
}

export interface ConversationSpec {
  kind: "continuation" | "tools";
  history: "thread" | "client";
  model: string;
  /** Turns per conversation (continuation). */
  turns: number;
  /** Authorization values, one per conversation in turn (conversations spread over many accounts). */
  auths?: string[];
}

export interface Conversation {
  /** autocannon's `requests`: one connection's cycle. */
  steps: Step[];
  /** Answers that were not what the turn needed: all of them, those among them with a 2xx status, and the first one. */
  bad: { count: number; ok2xx: number; first?: string };
  /** Conversations whose last turn was answered (thread history: their threads, with the key that owns them). */
  finished: { threadId?: string; auth?: string }[];
}

const THREAD_ID = /"thread_id":\s*"([^"]+)"/;
const TOOL_CALL_ID = /"tool_calls"[\s\S]*?"id":\s*"([^"]+)"/;
const TOOL_FINISH = /"finish_reason":\s*"tool_calls"/;

export function conversation(spec: ConversationSpec, stream: boolean): Conversation {
  const conv: Conversation = { steps: [], bad: { count: 0, ok2xx: 0 }, finished: [] };
  let nextAuth = 0;
  const request = (req: Req, context: Context, body: Record<string, unknown>): Req => ({
    ...req,
    headers: context.auth ? { ...req.headers, authorization: context.auth } : req.headers,
    body: JSON.stringify({ model: spec.model, max_tokens: 64, ...body, ...(stream ? { stream: true } : {}) }),
  });
  const begin = (context: Context) => {
    if (spec.auths) context.auth = spec.auths[nextAuth++ % spec.auths.length];
    context.history = [];
  };
  const threadOf = (context: Context) => (spec.history === "thread" ? { thread_id: context.threadId } : {});
  /** Checks one answer: the status, `ok` for its body and, on a thread, that it names the conversation's thread. */
  const answered = (status: number, body: string, context: Context, ok: boolean, last: boolean): boolean => {
    let good = status === 200 && ok;
    if (good && spec.history === "thread") {
      const thread = THREAD_ID.exec(body)?.[1];
      if (!thread || (context.threadId !== undefined && thread !== context.threadId)) good = false;
      else context.threadId = thread;
    }
    if (!good) {
      conv.bad.count++;
      if (status >= 200 && status < 300) conv.bad.ok2xx++;
      conv.bad.first ??= `HTTP ${status}: ${body.slice(0, 400)}`;
      context.broken = true;
    } else if (last && conv.finished.length < 1000) conv.finished.push({ threadId: context.threadId, auth: context.auth });
    return good;
  };
  // A step after a failed one returns null: autocannon then starts the cycle over (a new conversation).
  const step = (setup: (req: Req, context: Context) => Req, onResponse: Step["onResponse"]): Step => ({
    setupRequest: (req, context) => (context.broken ? null : setup(req, context)),
    onResponse,
  });

  if (spec.kind === "continuation") {
    for (let turn = 1; turn <= spec.turns; turn++) {
      const user = { role: "user", content: `Turn ${turn}: say hello in five words.` };
      conv.steps.push(
        step(
          (req, context) => {
            if (turn === 1) begin(context);
            const messages = spec.history === "client" ? [...context.history!, user] : [user];
            return request(req, context, { messages, ...(turn > 1 ? threadOf(context) : {}) });
          },
          (status, body, context) => {
            if (answered(status, body, context, body.includes("upstream"), turn === spec.turns)) context.history!.push(user, { role: "assistant", content: ANSWER });
          },
        ),
      );
    }
    return conv;
  }

  const question = { role: "user", content: TOOL_QUESTION };
  conv.steps.push(
    step(
      (req, context) => {
        begin(context);
        return request(req, context, { messages: [question], tools: [TOOL] });
      },
      (status, body, context) => {
        const id = TOOL_CALL_ID.exec(body)?.[1];
        if (answered(status, body, context, id !== undefined && TOOL_FINISH.test(body), false)) context.callId = id;
      },
    ),
    step(
      (req, context) => {
        const result = { role: "tool", tool_call_id: context.callId, content: TOOL_RESULT };
        const call = { id: context.callId, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) } };
        const messages = spec.history === "client" ? [question, { role: "assistant", content: ANSWER, tool_calls: [call] }, result] : [result];
        return request(req, context, { messages, tools: [TOOL], ...threadOf(context) });
      },
      (status, body, context) => void answered(status, body, context, body.includes("upstream") && !TOOL_FINISH.test(body), true),
    ),
  );
  return conv;
}

/** The roles a finished conversation leaves in its thread. */
export function expectedRoles(spec: ConversationSpec): string[] {
  return spec.kind === "tools" ? ["user", "assistant", "tool", "assistant"] : Array.from({ length: spec.turns }, () => ["user", "assistant"]).flat();
}

/**
 * Runs one conversation on one connection (`fetch`, turn after turn): the check that a target
 * really works before it is measured. Returns the conversation for its `bad` and `finished`.
 */
export async function converseOnce(url: string, headers: Record<string, string>, spec: ConversationSpec, stream: boolean): Promise<Conversation> {
  const conv = conversation(spec, stream);
  const context: Context = {};
  for (const s of conv.steps) {
    const req = s.setupRequest({ headers: { "content-type": "application/json", ...headers } }, context);
    if (!req) break;
    const r = await fetch(url, { method: "POST", headers: req.headers, body: req.body as string });
    s.onResponse(r.status, await r.text(), context);
  }
  return conv;
}
