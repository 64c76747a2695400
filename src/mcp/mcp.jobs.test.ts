import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";

/**
 * The MCP server of an automation agent through the official TypeScript SDK client: `run` starts
 * a job through the webhook ingest path (source MCP) and follows it with progress notifications;
 * `get_job` reads this agent's jobs only.
 */
const SCRIPT = `export default async function run(input, ctx) {
  if (input.fail) throw new Error("boom: " + input.fail);
  if (input.spin) { const end = Date.now() + input.spin; while (Date.now() < end) {} }
  return { doubled: input.n * 2 };
}`;

describe("MCP server of an automation agent (official TypeScript SDK client)", () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let otherAgentId: string;
  let key: string;
  let otherKey: string;
  const open: Client[] = [];

  const createKey = async (token: string, agent: string) =>
    (await gql(app.url, token, `mutation($a: ID!) { createApiKey(agentId: $a, name: "mcp") { key } }`, { a: agent })).data.createApiKey.key as string;
  const connect = async (apiKey: string, agent: string) => {
    const client = new Client({ name: "mcp-jobs-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp/${agent}`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
    open.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void) =>
    (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...(onprogress ? { onprogress } : {}) })) as CallToolResult;
  const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    admin = (await createAccount(app.url, app.operatorToken, "mcp-jobs", "10")).adminToken;
    agentId = await createAgent(app.url, admin, { name: "Doubler", script: SCRIPT });
    otherAgentId = await createAgent(app.url, admin, { name: "Other doubler", script: SCRIPT });
    key = await createKey(admin, agentId);
    otherKey = await createKey(admin, otherAgentId);
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => {});
    await app?.close();
  });

  it("lists run and get_job with schemas, named after the agent", async () => {
    const client = await connect(key, agentId);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_job", "run"]);
    const run = tools.find((t) => t.name === "run")!;
    expect(run.description).toContain("Doubler");
    expect(run.inputSchema.required).toEqual(["input"]);
    expect(run.outputSchema?.required?.sort()).toEqual(["job_id", "status"]);
  });

  it("run waits for the result, sending the job's statuses as progress; the job's source is MCP", async () => {
    const client = await connect(key, agentId);
    const progress: Progress[] = [];
    const r = await call(client, "run", { input: { n: 21, spin: 200 } }, (p) => progress.push(p));
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ job_id: expect.stringMatching(/^job_/), status: "done", result: { doubled: 42 } });
    expect(JSON.parse(text(r))).toEqual({ doubled: 42 });
    const statuses = progress.map((p) => p.message);
    expect(statuses).toContain("running");
    expect(statuses.at(-1)).toBe("done");
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    const job = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { source triggerId agentId } }`, { id: (r.structuredContent as { job_id: string }).job_id });
    expect(job.data.job).toEqual({ source: "MCP", triggerId: null, agentId });
  });

  it("run with wait_seconds 0 answers at once; get_job follows the job to its result", async () => {
    const client = await connect(key, agentId);
    const r = await call(client, "run", { input: { n: 5 }, wait_seconds: 0 });
    expect(r.isError).toBeFalsy();
    const { job_id, status } = r.structuredContent as { job_id: string; status: string };
    expect(["queued", "running", "done"]).toContain(status);
    let got: CallToolResult;
    const end = Date.now() + 60_000;
    do {
      got = await call(client, "get_job", { job_id });
      if ((got.structuredContent as { status: string }).status === "done") break;
      await new Promise((res) => setTimeout(res, 200));
    } while (Date.now() < end);
    expect(got.structuredContent).toEqual({ job_id, status: "done", result: { doubled: 10 } });
  });

  it("a client that drops the connection mid-run: the job goes on and get_job later sees it done", async () => {
    const aborter = new AbortController();
    const res = await fetch(`${app.url}/api/mcp/${agentId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "run", arguments: { input: { n: 4, spin: 1500 } }, _meta: { progressToken: "p" } } }),
      signal: aborter.signal,
    });
    // Read until the first progress notification (the job exists), then hang up.
    const reader = res.body!.getReader();
    let seen = "";
    while (!/"progressToken":"p"/.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
    aborter.abort();
    const client = await connect(key, agentId);
    const jobs = await gql(app.url, admin, `query($a: ID!) { jobs(first: 50, filter: { agentId: $a }) { edges { node { id status audit { payload } } } } }`, { a: agentId });
    const job = jobs.data.jobs.edges.map((e: { node: { id: string; audit: { payload: unknown } } }) => e.node).find((n: { audit: { payload: unknown } }) => JSON.stringify(n.audit?.payload) === JSON.stringify({ n: 4, spin: 1500 }));
    expect(job).toBeDefined();
    let status = "";
    for (const end = Date.now() + 60_000; Date.now() < end && status !== "done"; await new Promise((r) => setTimeout(r, 200))) {
      status = ((await call(client, "get_job", { job_id: job.id })).structuredContent as { status: string }).status;
    }
    expect(status).toBe("done");
  });

  it("a failed run is a tool error with the job's error; so is get_job of it", async () => {
    const client = await connect(key, agentId);
    const r = await call(client, "run", { input: { fail: "on purpose" } });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ status: "failed", error: expect.stringContaining("boom: on purpose") });
    expect(text(r)).toMatch(/^job job_\w+ failed: .*boom: on purpose/);
    const again = await call(client, "get_job", { job_id: (r.structuredContent as { job_id: string }).job_id });
    expect(again.isError).toBe(true);
    expect(again.structuredContent).toMatchObject({ status: "failed" });
  });

  it("the same idempotency_key returns the first run; another agent's or an unknown job is not found", async () => {
    const client = await connect(key, agentId);
    const a = await call(client, "run", { input: { n: 1 }, idempotency_key: "once", wait_seconds: 0 });
    const b = await call(client, "run", { input: { n: 2 }, idempotency_key: "once", wait_seconds: 0 });
    expect((b.structuredContent as { job_id: string }).job_id).toBe((a.structuredContent as { job_id: string }).job_id);

    const other = await connect(otherKey, otherAgentId);
    const foreign = await call(other, "get_job", { job_id: (a.structuredContent as { job_id: string }).job_id });
    expect(foreign.isError).toBe(true);
    expect(text(foreign)).toMatch(/^job_not_found: /);
    const unknown = await call(client, "get_job", { job_id: "job_doesnotexist" });
    expect(text(unknown)).toMatch(/^job_not_found: /);

    // Another account's job: not found either.
    const acc2 = await createAccount(app.url, app.operatorToken, "elsewhere", "10");
    const agent2 = await createAgent(app.url, acc2.adminToken, { name: "Elsewhere", script: SCRIPT });
    const c2 = await connect(await createKey(acc2.adminToken, agent2), agent2);
    const theirs = await call(c2, "run", { input: { n: 3 }, wait_seconds: 0 });
    const probe = await call(client, "get_job", { job_id: (theirs.structuredContent as { job_id: string }).job_id });
    expect(text(probe)).toMatch(/^job_not_found: /);
  });

  it("refuses inputs the webhook would refuse, as tool errors: over 1 MB, nested too deeply, not an object", async () => {
    const client = await connect(key, agentId);
    const big = await call(client, "run", { input: { s: "x".repeat(1_100_000) }, wait_seconds: 0 });
    expect(big.isError).toBe(true);
    expect(text(big)).toMatch(/^payload_too_large: /);
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const nested = await call(client, "run", { input: { deep }, wait_seconds: 0 });
    expect(nested.isError).toBe(true);
    expect(text(nested)).toMatch(/^invalid_json: /);
    const notObject = await call(client, "run", { input: [1, 2] });
    expect(notObject.isError).toBe(true);
    expect(text(notObject)).toContain("input");
    const badWait = await call(client, "run", { input: {}, wait_seconds: 10_000 });
    expect(badWait.isError).toBe(true);
    expect(text(badWait)).toContain("wait_seconds");
  });
});
