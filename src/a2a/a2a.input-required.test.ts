import { SendMessageRequest, TaskState, type StreamResponse, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { a2aJsonRpcClient } from "../../test/helpers/a2a-client.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * A job that asks (`ctx.ask`) through A2A, with the official JS client: a blocking send returns at
 * TASK_STATE_INPUT_REQUIRED with the prompt and the schema as the status message; a message on the
 * task answers it (a data part is the value) and the task goes on to COMPLETED; an answer the
 * schema refuses leaves it waiting; a stream ends at the question.
 */
describe("A2A: a job task that asks for input", () => {
  let app: TestApp;
  let admin: string;
  let agent: string;
  let key: string;

  const client = (): Promise<Client> => a2aJsonRpcClient(app.url, agent, key);
  const message = (parts: unknown[], taskId?: string) =>
    SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts, ...(taskId ? { taskId } : {}) } });
  const asTask = (r: unknown) => {
    expect(r).toHaveProperty("status");
    return r as Task;
  };

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-asks", "10"));
    const script = `export default async function run(input, ctx) {
      const v = await ctx.ask({ prompt: "Refund " + input.amount + "?", schema: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] } });
      return { amount: input.amount, approved: v.approved };
    }`;
    agent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "refunds", script: $s }) { id } }`, { s: script })).data!.createAgent.id;
    key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it("a blocking send returns at the question; a data part on the task answers it and the task completes", async () => {
    const c = await client();
    const asked = asTask(await c.sendMessage(message([{ data: { amount: 40 } }])));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const parts = asked.status!.message!.parts.map((p) => p.content);
    expect(parts[0]).toEqual({ $case: "text", value: "Refund 40?" });
    expect(parts[1]).toMatchObject({ $case: "data", value: { schema: { required: ["approved"] } } });
    expect(asTask(await c.getTask({ id: asked.id, historyLength: undefined, tenant: "" })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    // An answer the schema refuses: an error naming it, and the task still waits.
    await expect(c.sendMessage(message([{ data: { approved: "yes" } }], asked.id))).rejects.toThrow(/approved/);
    expect(asTask(await c.getTask({ id: asked.id, historyLength: undefined, tenant: "" })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const done = asTask(await c.sendMessage(message([{ data: { approved: true } }], asked.id)));
    expect(done.id).toBe(asked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]!.parts[0]!.content).toEqual({ $case: "data", value: { amount: 40, approved: true } });
    // Answered once: the task takes no more messages.
    await expect(c.sendMessage(message([{ data: { approved: false } }], asked.id))).rejects.toThrow();
    const job = (await gql(app.url, admin, `query($id: ID!) { job(id: $id) { status result } }`, { id: asked.id })).data!.job;
    expect(job).toEqual({ status: "DONE", result: { amount: 40, approved: true } });
  }, 120_000);

  it("a stream ends at the question with its status event; the answer by GraphQL resumes the same task", async () => {
    const c = await client();
    const events: StreamResponse[] = [];
    for await (const e of c.sendMessageStream(message([{ data: { amount: 7 } }]))) events.push(e as StreamResponse);
    const last = events.at(-1) as any;
    const state = last.payload?.value?.status?.state ?? last.status?.state;
    expect(state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const taskId = (events[0] as any).payload?.value?.id ?? (events[0] as any).id;
    const answered = await gql(app.url, admin, `mutation($j: ID!) { answerJobInput(jobId: $j, value: { approved: false }) { id } }`, { j: taskId });
    expect(answered.errors).toBeUndefined();
    for (let i = 0; i < 300; i++) {
      const t = asTask(await c.getTask({ id: taskId, historyLength: undefined, tenant: "" }));
      if (t.status?.state === TaskState.TASK_STATE_COMPLETED) {
        expect(t.artifacts[0]!.parts[0]!.content).toEqual({ $case: "data", value: { amount: 7, approved: false } });
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the task did not complete after the answer");
  }, 120_000);
});
