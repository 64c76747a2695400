import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

/**
 * Streams that follow a task are bounded per key (A2A_MAX_STREAMS_PER_KEY, here 2): the next one
 * is refused at once with HTTP 429 and a JSON-RPC error, not left hanging; other keys are not
 * affected, and a closed stream frees its slot. No worker runs, so the jobs stay queued and every
 * stream stays open until the test closes it.
 */
describe("A2A streams per key", () => {
  let app: TestApp;
  let agent: string;
  let key: string;
  let otherKey: string;
  let taskId: string;
  const open: AbortController[] = [];

  const post = (k: string, method: string, params: unknown, signal?: AbortSignal) =>
    fetch(`${app.url}/api/a2a/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${k}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method, params }),
      signal,
    });
  /** A stream, open once its first event (the Task) arrived. */
  const openStream = async (k: string, method: string, params: unknown) => {
    const ac = new AbortController();
    open.push(ac);
    const r = await post(k, method, params, ac.signal);
    if (!/event-stream/.test(r.headers.get("content-type") ?? "")) return { r, ac, first: undefined };
    const reader = r.body!.getReader();
    const { value } = await reader.read();
    return { r, ac, first: new TextDecoder().decode(value) };
  };
  const message = () => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] } });

  beforeAll(async () => {
    app = await startTestApp({ env: { A2A_MAX_STREAMS_PER_KEY: "2" } });
    const { adminToken } = await createAccount(app.url, app.operatorToken, "a2a-streams", "10");
    agent = (await gql(app.url, adminToken, `mutation($s: String!) { createAgent(input: { name: "job", script: $s }) { id } }`, { s: "export default async function run(input) { return input; }" })).data!.createAgent.id;
    const newKey = async () => (await gql(app.url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key as string;
    key = await newKey();
    otherKey = await newKey();
    const sent = await (await post(key, "SendMessage", { ...message(), configuration: { returnImmediately: true } })).json();
    taskId = sent.result.task.id;
  });
  afterAll(async () => {
    for (const ac of open) ac.abort();
    await app?.close();
  });

  it("the third stream of a key is a 429 JSON-RPC error at once; another key streams; a closed stream frees its slot", async () => {
    const a = await openStream(key, "SubscribeToTask", { id: taskId });
    expect(a.first).toContain(taskId);
    // A streamed send to an automation agent follows its job too: it takes a slot.
    const b = await openStream(key, "SendStreamingMessage", message());
    expect(b.first).toMatch(/"task"/);
    const jobsBefore = await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from jobs");

    for (const [method, params] of [
      ["SubscribeToTask", { id: taskId }],
      ["SendStreamingMessage", message()],
    ] as const) {
      const refused = await post(key, method, params);
      expect(refused.status, method).toBe(429);
      expect(refused.headers.get("retry-after"), method).toBeTruthy();
      const body = await refused.json();
      expect(body.error, method).toMatchObject({ code: -32000, data: [{ metadata: { code: "rate_limit_exceeded" } }] });
      expect(body.error.message, method).toMatch(/A2A_MAX_STREAMS_PER_KEY/);
    }
    // The refused send started no job.
    expect((await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from jobs")).rows[0]!.n).toBe(jobsBefore.rows[0]!.n);

    const other = await openStream(otherKey, "SubscribeToTask", { id: taskId });
    expect(other.first).toContain(taskId);

    a.ac.abort();
    let again: Awaited<ReturnType<typeof openStream>> | undefined;
    await waitUntil(
      async () => {
        again = await openStream(key, "SubscribeToTask", { id: taskId });
        return again.first !== undefined;
      },
      10_000,
      "a slot freed by the closed stream",
    );
    expect(again!.first).toContain(taskId);
  });
});
