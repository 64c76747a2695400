import { Client, StreamableHTTPClientTransport, type CallToolResult } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type WithTasksOptions } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";
import { TWO_QUESTIONS_SCRIPT } from "../../test/helpers/ask.js";

/**
 * MCP 2026-07-28 (server/discover, the per-request `_meta` envelope, Mcp-Method/Mcp-Name, list
 * TTLs) through the official TypeScript SDK v2 client, unmodified: the same tools as the
 * initialize era, and, for a client that declares it, the Tasks extension on `run` (through the
 * official ext-tasks client). The same v2 client in its default mode still gets the initialize era.
 */
const SCRIPT = `export default async function run(input, ctx) {
  if (input.spin) { const end = Date.now() + input.spin; while (Date.now() < end) {} }
  return { doubled: input.n * 2 };
}`;
const MODERN = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";

describe("MCP 2026-07-28 (official TypeScript SDK v2 client) and the Tasks extension", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let chatAgent: string;
  let runAgent: string;
  let otherRunAgent: string;
  let chatKey: string;
  let runKey: string;
  let otherRunKey: string;
  let askAgent: string;
  let askKey: string;
  let admin: string;
  const open: Client[] = [];

  const url = (agent: string) => `${app.url}/api/mcp/${agent}`;
  const connect = async (apiKey: string, agent: string, mode: "auto" | "legacy" = "auto") => {
    const client = new Client({ name: "mcp-modern-test", version: "1.0.0" }, { versionNegotiation: { mode } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url(agent)), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
    open.push(client);
    return client;
  };
  const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  /** One raw 2026-07-28 request, framed as the SDK frames it (envelope and standard headers). */
  const raw = async (apiKey: string, agent: string, method: string, params: Record<string, unknown>, extensions: Record<string, unknown> = {}, signal?: AbortSignal) => {
    const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }, "io.modelcontextprotocol/clientCapabilities": { extensions } };
    const res = await fetch(url(agent), {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof params.taskId === "string" ? { "mcp-name": params.taskId } : typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
      ...(signal ? { signal } : {}),
    });
    return { status: res.status, body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } };
  };

  /** The official ext-tasks client on a connected v2 client, with the host's raw request path for task wire shapes. */
  const tasksSession = (client: Client, apiKey: string, agent: string, options: Pick<WithTasksOptions, "onInputRequest"> = {}) => {
    let n = 0;
    return createTaskSessionFromClient(client, {
      endpointId: url(agent),
      ...options,
      // The adapter frames the envelope itself.
      rawDispatch: async (request) => {
        const r = request as { method: string; params?: Record<string, unknown>; id?: number | string };
        const taskId = r.params?.taskId;
        const name = r.params?.name;
        const res = await fetch(url(agent), {
          method: "POST",
          headers: {
            authorization: `Bearer ${apiKey}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": r.method,
            ...(typeof taskId === "string" ? { "mcp-name": taskId } : typeof name === "string" ? { "mcp-name": name } : {}),
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: r.id ?? `raw-${n++}`, ...r }),
        });
        const body = (await res.json()) as { result?: never; error?: never };
        return body.error !== undefined ? { kind: "error", error: body.error } : { kind: "result", result: body.result! };
      },
      v2RequestFraming: { protocolVersion: MODERN, clientInfo: { name: "mcp-modern-test", version: "1.0.0" }, clientCapabilities: {} },
    });
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    admin = (await createAccount(app.url, app.operatorToken, "mcp-modern", "10")).adminToken;
    const key = async (agent: string) => (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "mcp") { key } }`, { a: agent })).data.createApiKey.key as string;
    chatAgent = await createAgent(app.url, admin, { name: "Modern chat" });
    runAgent = await createAgent(app.url, admin, { name: "Modern doubler", script: SCRIPT });
    otherRunAgent = await createAgent(app.url, admin, { name: "Other doubler", script: SCRIPT });
    askAgent = await createAgent(app.url, admin, { name: "Modern asker", script: TWO_QUESTIONS_SCRIPT });
    [chatKey, runKey, otherRunKey, askKey] = [await key(chatAgent), await key(runAgent), await key(otherRunAgent), await key(askAgent)];
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => {});
    await app?.close();
    await fake?.close();
  });

  it("a chat agent: server/discover negotiates 2026-07-28; tools/list (with a TTL) and `chat` behave as in the initialize era", async () => {
    const client = await connect(chatKey, chatAgent);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getServerVersion()?.name).toBe("Modern chat");
    expect(client.getServerCapabilities()?.extensions?.[TASKS]).toBeUndefined(); // a chat turn is never a task
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["chat"]);
    expect((tools[0]!.outputSchema?.required as string[]).sort()).toEqual(["answer", "thread_id"]);
    const first = (await client.callTool({ name: "chat", arguments: { message: "first over 2026" } })) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect(text(first)).toBe("Hello from A");
    const { thread_id } = first.structuredContent as { thread_id: string };
    const second = (await client.callTool({ name: "chat", arguments: { message: "second over 2026", thread_id } })) as CallToolResult;
    expect((second.structuredContent as { thread_id: string }).thread_id).toBe(thread_id);
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("first over 2026");
    const unknown = (await client.callTool({ name: "chat", arguments: { message: "x", thread_id: "thr_unknown" } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^thread_not_found: /);

    const listed = await raw(chatKey, chatAgent, "tools/list", {});
    expect(listed.body.result).toMatchObject({ ttlMs: 10_000, cacheScope: "private" });
  });

  it("a client that leaves a 2026-07-28 `chat` mid-turn aborts the turn (as a dropped chat stream): the thread is free again at once", async () => {
    const opened = await raw(chatKey, chatAgent, "tools/call", { name: "chat", arguments: { message: "to be left (2026)" } });
    const thread = (opened.body.result!.structuredContent as { thread_id: string }).thread_id;
    const leaving = new AbortController();
    const left = raw(chatKey, chatAgent, "tools/call", { name: "chat", arguments: { message: "#hang and leave 2026", thread_id: thread } }, {}, leaving.signal).catch((e: Error) => e);
    await vi.waitFor(() => expect(fake.requests.some((r) => JSON.stringify(r.body).includes("#hang and leave 2026"))).toBe(true), { timeout: 10_000 });
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);
    await vi.waitFor(
      async () => {
        const again = await raw(chatKey, chatAgent, "tools/call", { name: "chat", arguments: { message: "after leaving (2026)", thread_id: thread } });
        expect(again.body.result?.structuredContent).toMatchObject({ thread_id: thread });
      },
      { timeout: 4_000, interval: 200 },
    );
  });

  it("the same v2 client in its default mode gets the initialize era (2025-11-25), served as before", async () => {
    const client = await connect(chatKey, chatAgent, "legacy");
    expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    const answer = (await client.callTool({ name: "chat", arguments: { message: "legacy over v2" } })) as CallToolResult;
    expect(text(answer)).toBe("Hello from A");
    const runner = await connect(runKey, runAgent, "legacy");
    expect(runner.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    const statuses: string[] = [];
    const done = (await runner.callTool({ name: "run", arguments: { input: { n: 4 } } }, { timeout: 90_000, onprogress: (p) => statuses.push(p.message ?? "") })) as CallToolResult;
    expect(done.structuredContent).toMatchObject({ status: "done", result: { doubled: 8 } });
    expect(statuses.at(-1)).toBe("done");
  });

  it("hostile 2026-07-28 requests get 4xx or JSON-RPC errors, never a 5xx", async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(url(runAgent), {
        method: "POST",
        headers: { authorization: `Bearer ${runKey}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(body),
      });
    const envelope = (version: unknown) => ({ "io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientInfo": { name: "x", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} });
    const cases: [Record<string, string>, unknown][] = [
      [{ "mcp-protocol-version": MODERN }, { jsonrpc: "2.0", id: 1, method: "tools/list" }], // a modern header without the envelope
      [{ "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" }, { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope("2099-01-01") } }],
      [{ "mcp-protocol-version": MODERN, "mcp-method": "tools/call" }, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "run", arguments: {}, _meta: envelope(MODERN) } }], // no Mcp-Name
      [{ "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "nope" }, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "nope", _meta: envelope(MODERN) } }],
      [{ "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "run" }, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "run", arguments: { input: [1], wait_seconds: "x" }, _meta: envelope(MODERN) } }],
      [{ "mcp-protocol-version": MODERN, "mcp-method": "tasks/get", "mcp-name": "x" }, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: 42, _meta: envelope(MODERN) } }],
      [{ "mcp-protocol-version": MODERN, "mcp-method": "initialize" }, { jsonrpc: "2.0", id: 1, method: "initialize", params: { _meta: envelope(MODERN) } }],
      [{ "mcp-protocol-version": MODERN }, [{ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope(MODERN) } }]],
      [{ "mcp-protocol-version": MODERN, "mcp-method": "tools/list" }, { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: "not an object" } }],
    ];
    for (const [headers, body] of cases) {
      const res = await post(headers, body);
      expect(res.status, JSON.stringify(body)).toBeLessThan(500);
      const answer = (await res.text()).trim();
      if (res.status !== 202) expect(answer, JSON.stringify(body)).toMatch(/"jsonrpc":"2.0"/);
    }
  });

  it("a 2026-07-28 request is still refused 401 without a valid key of this agent", async () => {
    for (const bad of ["a2a_wrong", otherRunKey]) {
      const refused = await raw(bad, runAgent, "tools/list", {});
      expect(refused.status).toBe(401);
      expect(refused.body.error?.code).toBe(-32001);
    }
  });

  it("an automation agent: run streams its progress and answers the result; get_job reads it; without Tasks a short wait answers the status", async () => {
    const client = await connect(runKey, runAgent);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getServerCapabilities()?.extensions?.[TASKS]).toEqual({});
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_job", "run"]);
    const statuses: string[] = [];
    const done = (await client.callTool({ name: "run", arguments: { input: { n: 21 }, wait_seconds: 60 } }, { timeout: 90_000, onprogress: (p) => statuses.push(p.message ?? "") })) as CallToolResult;
    expect(done.structuredContent).toMatchObject({ status: "done", result: { doubled: 42 }, job_id: expect.stringMatching(/^job_/) });
    expect(statuses.at(-1)).toBe("done");
    const jobId = (done.structuredContent as { job_id: string }).job_id;
    const job = (await client.callTool({ name: "get_job", arguments: { job_id: jobId } })) as CallToolResult;
    expect(job.structuredContent).toMatchObject({ job_id: jobId, status: "done", result: { doubled: 42 } });

    const quick = (await client.callTool({ name: "run", arguments: { input: { n: 1, spin: 1500 }, wait_seconds: 0 } })) as CallToolResult;
    expect(quick.isError).toBeFalsy();
    expect((quick.structuredContent as { status: string }).status).toMatch(/^(queued|running)$/);
    const bad = (await client.callTool({ name: "run", arguments: { input: "not an object" } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Invalid arguments for tool run/);
  });

  it("Tasks (official ext-tasks client): a run not done within wait_seconds is a task whose id is the job id, polled to its result", async () => {
    const client = await connect(runKey, runAgent);
    const session = tasksSession(client, runKey, runAgent);
    try {
      const execution = await session.callTool("run", { input: { n: 5, spin: 1500 }, wait_seconds: 0 });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle!.taskId;
      expect(taskId).toMatch(/^job_/);
      const { outcome } = await execution.settle();
      expect(outcome.status, JSON.stringify(outcome, (k, v) => (v instanceof Error ? { ...v, message: v.message } : v))).toBe("completed");
      const result = (outcome as { result: CallToolResult }).result;
      expect(result.structuredContent).toMatchObject({ job_id: taskId, status: "done", result: { doubled: 10 } });

      // A run done within its wait is an ordinary result even for a Tasks client.
      const quick = await session.callTool("run", { input: { n: 2 }, wait_seconds: 60 });
      expect(quick.kind).toBe("immediate");

      // tasks/cancel cancels the job (as cancelJob does); tasks/get then says cancelled.
      const long = await session.callTool("run", { input: { n: 1, spin: 20_000 }, wait_seconds: 0 });
      expect(long.kind).toBe("task");
      const longId = long.handle!.taskId;
      await session.cancelTask(longId);
      const after = await raw(runKey, runAgent, "tasks/get", { taskId: longId }, { [TASKS]: {} });
      expect(after.body.result).toMatchObject({ resultType: "complete", taskId: longId, status: "cancelled" });
    } finally {
      await session.close();
    }
  });

  it("tasks/*: -32021 without the extension, -32602 for another agent's or an unknown job, and tasks/update has no input request to answer yet", async () => {
    const client = await connect(runKey, runAgent);
    const done = (await client.callTool({ name: "run", arguments: { input: { n: 3 }, wait_seconds: 60 } }, { timeout: 90_000 })) as CallToolResult;
    const jobId = (done.structuredContent as { job_id: string }).job_id;
    const ext = { [TASKS]: {} };

    const undeclared = await raw(runKey, runAgent, "tasks/get", { taskId: jobId });
    expect(undeclared.body.error?.code).toBe(-32021);
    const got = await raw(runKey, runAgent, "tasks/get", { taskId: jobId }, ext);
    expect(got.body.result).toMatchObject({ resultType: "complete", taskId: jobId, status: "completed", result: { structuredContent: { status: "done", result: { doubled: 6 } } } });
    for (const [key, agent, taskId] of [
      [otherRunKey, otherRunAgent, jobId],
      [runKey, runAgent, "job_unknown"],
    ] as const) {
      const missing = await raw(key, agent, "tasks/get", { taskId }, ext);
      expect(missing.body.error?.code, `${agent} ${taskId}`).toBe(-32602);
    }
    const update = await raw(runKey, runAgent, "tasks/update", { taskId: jobId, inputResponses: { x: { action: "accept", content: {} } } }, ext);
    expect(update.body.error, JSON.stringify(update.body)).toMatchObject({ code: -32602, data: { reason: "no_input_request" } });
    const cancelDone = await raw(runKey, runAgent, "tasks/cancel", { taskId: jobId }, ext);
    expect(cancelDone.body.result).toMatchObject({ resultType: "complete" }); // finished: acknowledged, nothing to stop
  });

  it("Tasks with a run that asks (ctx.ask): the official client is offered each question as a form elicitation and answers it by tasks/update", async () => {
    const client = await connect(askKey, askAgent);
    const offered: { message: unknown; requestedSchema: unknown; inputId?: string }[] = [];
    const session = tasksSession(client, askKey, askAgent, {
      onInputRequest: async (request, context) => {
        if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind}`);
        offered.push({ message: request.params.message, requestedSchema: request.params.requestedSchema, inputId: context.inputId });
        if (offered.length === 1) return { action: "accept", content: { ok: true, note: "ship it" } } as never;
        return { action: "accept", content: { answer: '{"items":["a","b"]}' } } as never;
      },
    });
    try {
      const execution = await session.callTool("run", { input: { n: 7 }, wait_seconds: 0 });
      expect(execution.kind).toBe("task");
      const { outcome } = await execution.settle();
      expect(outcome.status, JSON.stringify(outcome, (k, v) => (v instanceof Error ? { ...v, message: v.message } : v))).toBe("completed");
      expect((outcome as { result: CallToolResult }).result.structuredContent).toMatchObject({ status: "done", result: { ok: true, note: "ship it", items: ["a", "b"] } });
      expect(offered.map((o) => o.message)).toEqual(["Approve order 7?", "Which items?"]);
      // The flat schema as it is; the array one as a JSON text field that carries it.
      expect(offered[0]!.requestedSchema).toMatchObject({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
      expect(offered[1]!.requestedSchema).toMatchObject({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] });
      expect(offered.every((o) => o.inputId?.startsWith("inp_"))).toBe(true);
    } finally {
      await session.close();
    }
  });

  it("tasks/update, raw: an invalid answer is -32602 validation_failed and the question stays open; decline leaves it open; another channel's answer wins; a wrong input id is refused", async () => {
    const ext = { [TASKS]: {} };
    const started = await raw(askKey, askAgent, "tools/call", { name: "run", arguments: { input: { n: 8 }, wait_seconds: 0 } }, ext);
    const taskId = started.body.result?.taskId as string;
    expect(taskId, JSON.stringify(started.body)).toMatch(/^job_/);
    let task: Record<string, unknown> = {};
    for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
      task = (await raw(askKey, askAgent, "tasks/get", { taskId }, ext)).body.result!;
      if (task.status === "input_required") break;
    }
    expect(task).toMatchObject({ status: "input_required", statusMessage: "input_required" });
    const [inputId] = Object.keys(task.inputRequests as object);
    const update = (inputResponses: Record<string, unknown>) => raw(askKey, askAgent, "tasks/update", { taskId, inputResponses }, ext);

    const invalid = await update({ [inputId!]: { action: "accept", content: { note: "no ok field" } } });
    expect(invalid.body.error, JSON.stringify(invalid.body)).toMatchObject({ code: -32602, data: { reason: "validation_failed" } });
    expect(invalid.body.error!.message).toContain("ok");
    expect((await update({ [inputId!]: { action: "decline" } })).body.result).toMatchObject({ resultType: "complete" });
    expect((await update({ inp_notthisone: { action: "accept", content: { ok: true } } })).body.error).toMatchObject({ code: -32602, data: { reason: "no_input_request" } });
    expect((await raw(askKey, askAgent, "tasks/get", { taskId }, ext)).body.result).toMatchObject({ status: "input_required" });

    // GraphQL answers first; a late tasks/update finds nothing to answer.
    const answered = await gql(app.url, admin, `mutation($j: ID!, $v: JSON!) { answerJobInput(jobId: $j, value: $v) { id } }`, { j: taskId, v: { ok: false } });
    expect(answered.errors, JSON.stringify(answered)).toBeUndefined();
    const late = await update({ [inputId!]: { action: "accept", content: { ok: true } } });
    expect(late.body.error?.code, JSON.stringify(late.body)).toBe(-32602);
    await raw(askKey, askAgent, "tasks/cancel", { taskId }, ext);
  });

  it("a client waiting in run is asked each question by elicitation (2026-07-28 input requests) and answers through its handler; an invalid answer is asked again", async () => {
    const client = new Client({ name: "mcp-modern-elicit", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } });
    const asked: { message: string; requestedSchema: unknown }[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { message: string; requestedSchema: unknown };
      asked.push({ message: params.message, requestedSchema: params.requestedSchema });
      // The first answer breaks the schema (no `ok`): the server asks again with the reason.
      const accept = (content: Record<string, string | boolean>) => ({ action: "accept" as const, content });
      if (asked.length === 1) return accept({ note: "forgot ok" });
      if (asked.length === 2) return accept({ ok: true });
      return accept({ answer: '{"items":["x"]}' });
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url(askAgent)), { requestInit: { headers: { Authorization: `Bearer ${askKey}` } } }));
    open.push(client);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const res = (await client.callTool({ name: "run", arguments: { input: { n: 11 }, wait_seconds: 120 } }, { timeout: 150_000 })) as CallToolResult;
    expect(res.isError, text(res)).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ status: "done", result: { ok: true, note: null, items: ["x"] } });
    expect(asked.map((a) => a.message.split("\n").at(-1))).toEqual(["Approve order 11?", "Approve order 11?", "Which items?"]);
    expect(asked[1]!.message).toMatch(/^The answer is not valid: .*ok/);
    expect(asked[0]!.requestedSchema).toMatchObject({ properties: { ok: { type: "boolean" } } });

    // A client that cannot be asked (no elicitation capability) waits as before: the job waits for another channel.
    const plain = await connect(askKey, askAgent);
    const waiting = (await plain.callTool({ name: "run", arguments: { input: { n: 12 }, wait_seconds: 3 } })) as CallToolResult;
    expect(waiting.structuredContent).toMatchObject({ status: "input_required" });
    const jobId = (waiting.structuredContent as { job_id: string }).job_id;
    await gql(app.url, admin, `mutation($j: ID!) { cancelJob(id: $j) { id } }`, { j: jobId }).catch(() => {});
  });
});
