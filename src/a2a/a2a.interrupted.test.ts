import { SendMessageRequest, StreamResponse, TaskState, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { a2aJsonRpcClient } from "../../test/helpers/a2a-client.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { balanceMicros, unreleasedHolds } from "../../test/helpers/balance.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { startUpstreamGate, type UpstreamGate } from "../../test/helpers/upstream-gate.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

/**
 * A2A chat tasks whose turn does not end the usual way, black-box: a blocking send whose turn
 * outlives the blocking wait (A2A_BLOCKING_WAIT_SECONDS, 1 s here; the upstream parked at a gate)
 * answers with the task working instead of a task nobody can find; a turn whose instance died
 * (its lease expired) ends its task failed in the reclaim, which pushes it.
 */
describe("A2A chat tasks that outlive the wait or lose their turn", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let fake: FakeUpstream;
  let gate: UpstreamGate;
  let app: TestApp;
  let admin: string;
  let accountId: string;
  let agent: string;
  let key: string;

  const balance = () => balanceMicros(app.url, admin);
  const client = (): Promise<Client> => a2aJsonRpcClient(app.url, agent, key);
  const send = (text: string, configuration: Record<string, unknown> = {}) =>
    SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] }, configuration });
  const asTask = (r: unknown) => {
    expect(r).toHaveProperty("status");
    return r as Task;
  };
  const answer = (t: Task) => t.artifacts.flatMap((a) => a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))).join("");

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    fake = await startFakeUpstream();
    gate = await startUpstreamGate(fake.url);
    app = await startTestApp({
      worker: true,
      env: {
        PROVIDER_A_BASE_URL: gate.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: gate.url, PROVIDER_B_API_KEY: "kb",
        EGRESS_ALLOW_PRIVATE: "false", EGRESS_ALLOW_ADDRESSES: "127.0.0.2", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }), EGRESS_CA_FILE: ca.caFile,
        A2A_BLOCKING_WAIT_SECONDS: "1",
        HOLD_RECLAIM_INTERVAL_MS: "200",
      },
    });
    ({ adminToken: admin, accountId } = await createAccount(app.url, app.operatorToken, "a2a-interrupted", "10"));
    agent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "chat" }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
  }, 120_000);
  afterAll(async () => {
    gate?.release();
    await app?.close();
    await gate?.close();
    await hooks?.close();
    await fake?.close();
    ca?.cleanup();
  });

  it("a blocking send that outlives the wait answers WORKING; GetTask finds it; it ends COMPLETED with the answer, charged once", async () => {
    const c = await client();
    // What one such turn costs, answered within the wait.
    const beforeRef = await balance();
    const ref = asTask(await c.sendMessage(send("same question")));
    expect(ref.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const charge = beforeRef - (await balance());
    expect(charge).toBeGreaterThan(0);

    const before = await balance();
    gate.hold();
    const sent = asTask(await c.sendMessage(send("same question")));
    expect(gate.arrived).toBe(1);
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const got = await c.getTask({ tenant: "", id: sent.id });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(got.contextId).toBe(sent.contextId);
    // ...and can follow it to its end.
    const heard: StreamResponse[] = [];
    const subscribed = (async () => {
      for await (const e of c.resubscribeTask({ tenant: "", id: sent.id })) heard.push(e as StreamResponse);
    })();
    await waitUntil(async () => (await app.runtime.pool.query("select 1 from a2a_tasks where id = $1 and followed", [sent.id])).rowCount === 1, 30_000, "the subscriber following");

    gate.release();
    await subscribed;
    expect(heard.at(-1)?.payload).toMatchObject({ $case: "statusUpdate", value: { taskId: sent.id, status: { state: TaskState.TASK_STATE_COMPLETED } } });
    expect(heard.some((e) => e.payload?.$case === "artifactUpdate")).toBe(true);
    const ended = await c.getTask({ tenant: "", id: sent.id });
    expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answer(ended)).toBe(answer(ref));
    expect(answer(ended).length).toBeGreaterThan(0);
    expect(await balance()).toBe(before - charge);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
  });

  it("a turn whose lease expired (its instance died): the reclaim ends its task FAILED and pushes it once; GetTask says FAILED; the hold is handed back whole", async () => {
    const before = await balance();
    const path = "/interrupted";
    gate.hold();
    const r = await fetch(`${app.url}/api/a2a/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "cut short" }] }, configuration: { returnImmediately: true, taskPushNotificationConfig: { url: `https://hooks.test:${hooks.port}${path}`, token: "tok" } } },
      }),
    });
    const taskId = ((await r.json()) as { result: { task: { id: string } } }).result.task.id;
    await waitUntil(() => gate.arrived >= 1, 30_000, "the turn at the upstream");
    // A subscriber follows the task (its end is NOTIFYed from the mark on).
    const c = await client();
    const heard: StreamResponse[] = [];
    const subscribed = (async () => {
      for await (const e of c.resubscribeTask({ tenant: "", id: taskId })) heard.push(e as StreamResponse);
    })();
    await waitUntil(async () => (await app.runtime.pool.query("select 1 from a2a_tasks where id = $1 and followed", [taskId])).rowCount === 1, 30_000, "the subscriber following");
    // As if the instance running the turn had died: its lease runs out, and the periodic reclaim takes it.
    await app.runtime.pool.query("update threads set busy_until = now() - interval '1 second' where account_id = $1 and turn_id is not null", [accountId]);
    await subscribed;
    expect(heard.at(-1)?.payload).toMatchObject({ $case: "statusUpdate", value: { taskId, status: { state: TaskState.TASK_STATE_FAILED } } });
    await waitUntil(async () => (await c.getTask({ tenant: "", id: taskId })).status?.state === TaskState.TASK_STATE_FAILED, 30_000, "the task failed");
    const finals = () => hooks.to(path).map((x) => StreamResponse.fromJSON(JSON.parse(x.body))).filter((e) => e.payload?.$case === "task");
    await waitUntil(() => finals().length > 0, 60_000, "the FAILED push");
    expect(await balance()).toBe(before);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);

    // The turn's late answer (its finish finds the hold settled) changes nothing: no charge, the task stays failed, no second push.
    gate.release();
    const deliveries = await app.runtime.pool.query<{ event: string; status: string }>("select event, status from deliveries where target in (select id from a2a_push_configs where task_id = $1) order by event", [taskId]);
    expect(deliveries.rows.map((d) => d.event)).toEqual(["failed", "working"]);
    await waitUntil(async () => (await app.runtime.pool.query("select 1 from deliveries where target in (select id from a2a_push_configs where task_id = $1) and status = 'pending'", [taskId])).rowCount === 0, 60_000, "both pushes delivered");
    const final = finals();
    expect(final).toHaveLength(1);
    const task = final[0]!.payload!;
    if (task.$case !== "task") throw new Error("unreachable");
    expect(task.value.id).toBe(taskId);
    expect(task.value.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect((await c.getTask({ tenant: "", id: taskId })).status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(await balance()).toBe(before);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
  });
  it("an agent deleted while its turns wait upstream (a blocking send, a stream, a non-blocking send): each fails, no task of the agent is left, every hold comes back", async () => {
    const gone = (await gql(app.url, admin, `mutation { createAgent(input: { name: "deleted mid-turn" }) { id } }`)).data!.createAgent.id as string;
    const goneKey = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: gone })).data!.createApiKey.key as string;
    const before = await balance();
    const call = (method: string, configuration: Record<string, unknown>) =>
      fetch(`${app.url}/api/a2a/${gone}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${goneKey}`, "A2A-Version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "about to go" }] }, configuration } }),
      }).then(async (r) => ({ status: r.status, body: await r.text() }));
    gate.hold();
    const calls = [call("SendMessage", {}), call("SendStreamingMessage", {}), call("SendMessage", { returnImmediately: true })];
    await waitUntil(() => gate.arrived >= 3, 30_000, "the three turns at the upstream");
    const tasks = () => app.runtime.pool.query("select id, state from a2a_tasks where agent_id = $1", [gone]);
    expect((await gql(app.url, admin, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: gone })).data).toEqual({ deleteAgent: true });
    expect((await tasks()).rows).toEqual([]);
    gate.release();
    for (const r of await Promise.all(calls)) {
      expect(r.status).toBeLessThan(500);
      expect(r.body).not.toContain("COMPLETED");
    }
    // Each turn's end, written alone once its finish found the thread gone, finds the agent gone too.
    await new Promise((r) => setTimeout(r, 500));
    expect((await tasks()).rows).toEqual([]);
    expect(await balance()).toBe(before);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
  });
});
