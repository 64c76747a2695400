import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { spyQueries } from "../../test/helpers/pool-spy.js";
import { TOTAL_SIZE_CAP } from "./store.js";

/**
 * ListTasks is served by a2a_tasks_agent_updated_idx in keyset order: pages in newest-status-first
 * order with every filter across pages (a job's transition moves its task to the front and
 * changes the state the filter sees), the page query reads no `jobs` row and sorts nothing
 * (EXPLAIN of the statements the call ran), and totalSize is a bounded count. No worker runs:
 * jobs stay queued (SUBMITTED) until cancelled, so every state change here is the test's own.
 */
describe("A2A ListTasks by the index", () => {
  let app: TestApp;
  let admin: string;
  let agent: string;
  let key: string;

  const rpc = async (method: string, params: unknown) => {
    const r = await fetch(`${app.url}/api/a2a/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method, params }),
    });
    const body = (await r.json()) as any;
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result;
  };
  const send = async (contextId: string) =>
    (await rpc("SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", contextId, parts: [{ text: "hi" }] }, configuration: { returnImmediately: true } })).task.id as string;
  /** Every task of the list, page by page. */
  const all = async (params: Record<string, unknown>, pageSize: number) => {
    const ids: string[] = [];
    const totals: number[] = [];
    let pageToken = "";
    for (let i = 0; i < 100; i++) {
      const page = await rpc("ListTasks", { ...params, pageSize, pageToken });
      ids.push(...page.tasks.map((t: { id: string }) => t.id));
      totals.push(page.totalSize);
      if (!page.nextPageToken) return { ids, totals, states: page.tasks.map((t: { status: { state: string } }) => t.status.state) };
      pageToken = page.nextPageToken;
    }
    throw new Error("the list did not end");
  };

  beforeAll(async () => {
    app = await startTestApp();
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-list", "10"));
    const create = async (name: string) => (await gql(app.url, admin, `mutation($n: String!, $s: String!) { createAgent(input: { name: $n, script: $s }) { id } }`, { n: name, s: "export default async function run(input) { return input; }" })).data!.createAgent.id as string;
    agent = await create("listed");
    key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key as string;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("pages newest status first with every filter; a transition moves its task to the front and into the state filter", async () => {
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) sent.push(await send(i % 2 === 0 ? "ctx-even" : "ctx-odd"));
    const newestFirst = [...sent].reverse();
    expect((await all({}, 3)).ids).toEqual(newestFirst);
    expect((await all({}, 3)).totals).toEqual([7, 7, 7]);

    // The oldest task is cancelled: its status is now the newest.
    const cancelled = sent[0]!;
    await rpc("CancelTask", { id: cancelled });
    expect((await all({}, 2)).ids).toEqual([cancelled, ...newestFirst.filter((id) => id !== cancelled)]);
    const canceledOnly = await all({ status: "TASK_STATE_CANCELED" }, 2);
    expect(canceledOnly.ids).toEqual([cancelled]);
    expect(canceledOnly.states).toEqual(["TASK_STATE_CANCELED"]);
    expect(canceledOnly.totals).toEqual([1]);
    const submitted = await all({ status: "TASK_STATE_SUBMITTED" }, 2);
    expect(submitted.ids).toEqual(newestFirst.filter((id) => id !== cancelled));
    expect(submitted.totals).toEqual([6, 6, 6]);
    const even = await all({ contextId: "ctx-even" }, 1);
    expect(even.ids).toEqual([sent[0], sent[6], sent[4], sent[2]]);
    expect(even.totals.every((n) => n === 4)).toBe(true);
    const evenSubmitted = await all({ contextId: "ctx-even", status: "TASK_STATE_SUBMITTED" }, 2);
    expect(evenSubmitted.ids).toEqual([sent[6], sent[4], sent[2]]);

    // statusTimestampAfter: only what changed after the cancel's status time.
    const at = (await rpc("GetTask", { id: cancelled })).status.timestamp as string;
    expect((await all({ statusTimestampAfter: new Date(new Date(at).getTime() - 1).toISOString() }, 5)).ids).toEqual([cancelled]);
  });

  it("a transition before the task's record (its instance died between the two) leaves a stub no read shows; the resend completes it with the later state", async () => {
    const messageId = crypto.randomUUID();
    const message = { messageId, role: "ROLE_USER", contextId: "ctx-late", parts: [{ text: "hi" }] };
    const id = (await rpc("SendMessage", { message, configuration: { returnImmediately: true } })).task.id as string;
    // As if the job had committed and its record had not been written yet.
    await app.runtime.pool.query("delete from a2a_tasks where id = $1", [id]);
    const cancelled = await gql(app.url, admin, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, { id });
    expect(cancelled.data!.cancelJob.status).toBe("FAILED");
    expect((await all({ contextId: "ctx-late" }, 5)).ids).toEqual([]);
    expect((await all({}, 100)).ids).not.toContain(id);
    await expect(rpc("GetTask", { id })).rejects.toThrow(/-32001/);
    // The client's resend writes the record: the job's later state and time stay.
    expect((await rpc("SendMessage", { message, configuration: { returnImmediately: true } })).task.id).toBe(id);
    const listed = await all({ contextId: "ctx-late" }, 5);
    expect(listed.ids).toEqual([id]);
    expect(listed.states).toEqual(["TASK_STATE_CANCELED"]);
    expect((await all({ status: "TASK_STATE_CANCELED" }, 100)).ids[0]).toBe(id);
  });

  it("the page query walks a2a_tasks_agent_updated_idx without a sort and reads no jobs row; totalSize is counted up to TOTAL_SIZE_CAP", async () => {
    // Enough rows of this agent and of others that a plan could prefer a scan.
    const { rows: ctx } = await app.runtime.pool.query<{ account_id: string }>("select account_id from agents where id = $1", [agent]);
    const account = ctx[0]!.account_id;
    await app.runtime.pool.query(
      `insert into a2a_tasks (id, account_id, agent_id, context_id, kind, state, request, created_at, updated_at)
       select 'tsk_bulk_' || i, $1, $2, 'ctx-bulk', 'chat', case when i % 3 = 0 then 'completed' else 'working' end, '{}'::jsonb,
              now() - i * interval '1 second', now() - i * interval '1 second' from generate_series(1, $3::int) i`,
      [account, agent, TOTAL_SIZE_CAP + 500],
    );
    await app.runtime.pool.query("analyze a2a_tasks");
    const spy = spyQueries(app.runtime.pool);
    let first: any;
    try {
      first = await rpc("ListTasks", { pageSize: 50 });
      await rpc("ListTasks", { pageSize: 50, pageToken: first.nextPageToken, status: "TASK_STATE_COMPLETED" });
      await rpc("ListTasks", { pageSize: 50, contextId: "ctx-bulk" });
    } finally {
      spy.restore();
    }
    expect(first.tasks).toHaveLength(50);
    expect(first.totalSize).toBe(TOTAL_SIZE_CAP);
    const pages = spy.seen.filter((q) => /order by t\.updated_at desc/.test(q.text));
    expect(pages).toHaveLength(3);
    for (const q of pages) {
      const { rows } = await app.runtime.pool.query(`explain (format json) ${q.text}`, q.values);
      const plan = JSON.stringify(rows[0]["QUERY PLAN"]);
      expect(plan, q.text).toContain('"Index Name":"a2a_tasks_agent_updated_idx"');
      expect(plan, q.text).toContain('"Scan Direction":"Backward"');
      expect(plan, q.text).not.toContain('"Node Type":"Sort"');
      expect(plan, q.text).not.toContain('"Relation Name":"jobs"');
    }
    const counts = spy.seen.filter((q) => /count\(\*\)/.test(q.text) && /a2a_tasks/.test(q.text));
    expect(counts).toHaveLength(3);
    for (const q of counts) {
      const { rows } = await app.runtime.pool.query(`explain (format json) ${q.text}`, q.values);
      const plan = JSON.stringify(rows[0]["QUERY PLAN"]);
      expect(plan, q.text).toContain('"Node Type":"Limit"');
      expect(plan, q.text).not.toContain('"Relation Name":"jobs"');
    }
  });

  it("a task goes with its agent, and so with its account (through its agents)", async () => {
    const { adminToken: owner, accountId } = await createAccount(app.url, app.operatorToken, "a2a-list-gone", "10");
    const create = async (name: string) => (await gql(app.url, owner, `mutation($n: String!, $s: String!) { createAgent(input: { name: $n, script: $s }) { id } }`, { n: name, s: "export default async function run(input) { return input; }" })).data!.createAgent.id as string;
    const sendAs = async (agentId: string) => {
      const k = (await gql(app.url, owner, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agentId })).data!.createApiKey.key as string;
      const r = await fetch(`${app.url}/api/a2a/${agentId}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${k}`, "A2A-Version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] }, configuration: { returnImmediately: true } } }),
      });
      return ((await r.json()) as any).result.task.id as string;
    };
    const [deleted, kept] = [await create("deleted"), await create("kept")];
    const tasks = [await sendAs(deleted), await sendAs(kept)];
    const left = async () => (await app.runtime.pool.query<{ id: string }>("select id from a2a_tasks where id = any($1::text[]) order by id", [tasks])).rows.map((r) => r.id);
    expect(await left()).toEqual([...tasks].sort());
    expect((await gql(app.url, owner, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: deleted })).data).toEqual({ deleteAgent: true });
    expect(await left()).toEqual([tasks[1]]);
    // No API deletes an account; an operator's delete reaches the tasks through the agents.
    await app.runtime.pool.query("delete from accounts where id = $1", [accountId]);
    expect(await left()).toEqual([]);
  });
});
