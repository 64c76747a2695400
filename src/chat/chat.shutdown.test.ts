import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { balanceMicros, chargeOf, storedBalanceMicros, unreleasedHolds } from "../../test/helpers/balance.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { estimateTokens } from "../../src/providers/index.js";

/**
 * A graceful stop (a rolling deploy) costs customers nothing they were not answered (issue 17):
 * turns that finish within SHUTDOWN_DRAIN_MS are answered and billed; those still waiting on
 * their upstream then are cut: a non-stream chat or Responses turn answers 503 and releases its
 * hold, a stream that sent part of its answer is saved and billed for that part; A2A and MCP
 * turns alike (a failed task, a tool error). The oracle is the account's balance, read from its
 * row after the API stopped.
 */
const B = "provider_b/model-haiku-4-5-20251001";
/** What the fake provider_b reports at message_start, before a #cut stream stalls. */
const FAKE_B_START = { input: 12, output: 1 };

describe("graceful stop with chat turns in flight", () => {
  let app: TestApp;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: { PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_TIMEOUT_MS: "120000", UPSTREAM_MAX_RETRIES: "0", SHUTDOWN_DRAIN_MS: "4000" },
    });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("answers what finishes within the drain, cuts and settles the rest: balance = initial − charges of what was answered", async () => {
    const { accountId, adminToken } = await createAccount(app.url, app.operatorToken, "deploy", "10");
    // Its default model is the one the chat calls name: A2A and MCP turns use it.
    const agent = (await gql(app.url, adminToken, `mutation { createAgent(input: { name: "d", defaultModel: "${B}" }) { id } }`)).data!.createAgent.id;
    const key = (await gql(app.url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
    const initial = await balanceMicros(app.url, adminToken);
    const call = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      fetch(`${app.url}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers }, body: JSON.stringify(body) }).then(
        async (r) => ({ status: r.status, text: await r.text().catch((err: Error) => `(cut: ${err.message})`) }),
        (err: Error) => ({ status: 0, text: String(err) }),
      );
    const post = (path: string, body: Record<string, unknown>) => call(`/api/v1/${path}`, { model: B, ...body });
    const a2a = (method: string, text: string) =>
      call(`/api/a2a/${agent}`, { jsonrpc: "2.0", id: 1, method, params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } } }, { "a2a-version": "1.0" });
    const a2aRest = (method: "send" | "stream", text: string) =>
      call(`/api/a2a/${agent}/v1/message:${method}`, { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } }, { "a2a-version": "1.0" });
    const sent = fake.requests.length;
    const pending = {
      chatDone: post("chat/completions", { messages: [{ role: "user", content: "quick #slow" }] }),
      responseDone: post("responses", { input: "quick #slow" }),
      streamDone: post("chat/completions", { stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "stream #slow" }] }),
      chatCut: post("chat/completions", { messages: [{ role: "user", content: "wait #hang" }] }),
      responseCut: post("responses", { input: "wait #hang" }),
      streamCutEmpty: post("chat/completions", { stream: true, messages: [{ role: "user", content: "silent #hang" }] }),
      streamCut: post("chat/completions", { stream: true, messages: [{ role: "user", content: "partial #cut" }] }),
      responseStreamCut: post("responses", { stream: true, input: "partial #cut" }),
      // The agent protocols' turns are this instance's turns too.
      a2aSendCut: a2a("SendMessage", "wait #hang"),
      a2aStreamCut: a2a("SendStreamingMessage", "partial #cut"),
      // And on the HTTP+JSON binding, the same tasks without the JSON-RPC envelope.
      a2aRestSendCut: a2aRest("send", "wait #hang"),
      a2aRestStreamCut: a2aRest("stream", "partial #cut"),
      mcpCut: call(`/api/mcp/${agent}`, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "chat", arguments: { message: "wait #hang" } } }, { accept: "application/json, text/event-stream" }),
    };
    // Every turn holds its money and waits on the upstream; then the deploy stops this instance.
    for (let i = 0; fake.requests.length < sent + Object.keys(pending).length; i++) {
      if (i > 600) throw new Error("the turns never reached the upstream");
      await new Promise((r) => setTimeout(r, 50));
    }
    await app.api.close();
    const r = Object.fromEntries(await Promise.all(Object.entries(pending).map(async ([k, p]) => [k, await p] as const)));

    const events = (text: string) =>
      text
        .split("\n\n")
        .map((block) => block.split("\n").find((l) => l.startsWith("data: {")))
        .filter((l) => l !== undefined)
        .map((l) => JSON.parse(l.slice(6)));
    for (const k of ["chatDone", "responseDone", "streamDone"]) expect(r[k]!.status, `${k}: ${r[k]!.text}`).toBe(200);
    const cut = events(r.streamCut!.text);
    const partial = cut.map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
    const charges =
      chargeOf(app.config, B, JSON.parse(r.chatDone!.text).usage) +
      chargeOf(app.config, B, JSON.parse(r.responseDone!.text).usage) +
      chargeOf(app.config, B, events(r.streamDone!.text).at(-1).usage) +
      // The cut streams pay for what they sent: the provider's counts so far, the text it produced.
      4 * chargeOf(app.config, B, { prompt_tokens: FAKE_B_START.input, completion_tokens: Math.max(FAKE_B_START.output, estimateTokens(partial)) });
    expect(await storedBalanceMicros(app.runtime.pool, accountId)).toBe(initial - charges);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
    for (const k of ["chatCut", "responseCut", "streamCutEmpty"]) {
      expect(r[k]!.status, `${k}: ${r[k]!.text}`).toBe(503);
      expect(JSON.parse(r[k]!.text).error.code).toBe("service_unavailable");
    }
    expect(partial).toBe("Hello");
    expect(cut.at(-1).error.code).toBe("service_unavailable");
    const responseCut = events(r.responseStreamCut!.text);
    const responsePartial = responseCut.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(responsePartial).toBe("Hello");
    expect(responseCut.map((e) => e.type).slice(-2)).toEqual(["error", "response.failed"]);
    expect(responseCut.at(-2).code).toBe("service_unavailable");

    const { rows } = await app.runtime.pool.query("select content from messages where thread_id = $1 and role = 'assistant'", [cut[0].thread_id]);
    expect(rows.map((x) => x.content)).toEqual(["Hello"]);

    // A2A: a blocking send cut before any text is a failed task that cost nothing; a stream cut
    // mid-answer ends with what it sent, failed, and the same 503 message (the client retries).
    const cutMessage = "The server is shutting down; nothing was charged for what was not answered, retry the request";
    const sendCut = JSON.parse(r.a2aSendCut!.text).result.task;
    expect(sendCut.status.state, r.a2aSendCut!.text).toBe("TASK_STATE_FAILED");
    expect(sendCut.status.message.parts[0].text).toBe(cutMessage);
    const a2aEvents = events(r.a2aStreamCut!.text).map((e) => e.result);
    const streamed = a2aEvents.filter((e) => e.artifactUpdate).flatMap((e) => e.artifactUpdate.artifact.parts.map((p: { text: string }) => p.text)).join("");
    expect(streamed).toBe("Hello");
    expect(a2aEvents.at(-1).statusUpdate.status.state).toBe("TASK_STATE_FAILED");
    expect(a2aEvents.at(-1).statusUpdate.status.message.parts[0].text).toBe(cutMessage);
    const restSendCut = JSON.parse(r.a2aRestSendCut!.text).task;
    expect(r.a2aRestSendCut!.status, r.a2aRestSendCut!.text).toBe(200);
    expect(restSendCut.status.state).toBe("TASK_STATE_FAILED");
    expect(restSendCut.status.message.parts[0].text).toBe(cutMessage);
    const restEvents = events(r.a2aRestStreamCut!.text);
    expect(restEvents.filter((e) => e.artifactUpdate).flatMap((e) => e.artifactUpdate.artifact.parts.map((p: { text: string }) => p.text)).join("")).toBe("Hello");
    expect(restEvents.at(-1).statusUpdate.status.state, r.a2aRestStreamCut!.text).toBe("TASK_STATE_FAILED");
    expect(restEvents.at(-1).statusUpdate.status.message.parts[0].text).toBe(cutMessage);
    const { rows: tasks } = await app.runtime.pool.query("select id, state, answer, error from a2a_tasks where account_id = $1 order by id", [accountId]);
    const ended = (id: string, answer: string | null) => ({ id, state: "failed", answer, error: cutMessage });
    expect(tasks).toEqual(
      [ended(sendCut.id, null), ended(a2aEvents[0].task.id, "Hello"), ended(restSendCut.id, null), ended(restEvents[0].task.id, "Hello")].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    // MCP: the chat tool's error result, as a chat completion's 503.
    const mcp = JSON.parse(r.mcpCut!.text).result;
    expect(mcp.isError).toBe(true);
    expect(mcp.content[0].text).toBe(`service_unavailable: ${cutMessage}; retry after 1 s`);
  });
});
