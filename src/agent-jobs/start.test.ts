import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";
import { waitForJob } from "../jobs/wait.js";
import type { JobStatusEvent } from "../jobs/store.js";
import { startAgentJob } from "./start.js";

describe("jobs started without a trigger (the A2A/MCP seam)", () => {
  let app: TestApp;
  let admin: string;
  let accountId: string;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    ({ adminToken: admin, accountId } = await createAccount(app.url, app.operatorToken, "seam", "10"));
    agentId = await createAgent(app.url, admin, { name: "echo", script: `export default async function run(input) { return { echoed: input }; }` });
  });
  afterAll(async () => app?.close());

  it("runs like a webhook's job: source A2A, audited, idempotent per agent and source, awaited from the event bus", async () => {
    const start = (source: "a2a" | "mcp", key: string | null, n: number) =>
      startAgentJob(app.runtime, { accountId, agentId, source, payloadText: JSON.stringify({ n }), idempotencyKey: key });
    // Concurrent sends with one message id: one job.
    const same = await Promise.all(Array.from({ length: 8 }, (_, i) => start("a2a", "msg-1", i)));
    expect(new Set(same.map((r) => r.jobId)).size).toBe(1);
    expect(same.filter((r) => r.created)).toHaveLength(1);
    // The same key from another source (or none) is another job.
    const mcp = await start("mcp", "msg-1", 99);
    expect(mcp.jobId).not.toBe(same[0]!.jobId);

    const seen: JobStatusEvent[] = [];
    const end = await waitForJob(app.runtime, accountId, same[0]!.jobId, { until: new Date(Date.now() + 60_000), onStatus: (e) => void seen.push(e) });
    expect(end?.status).toBe("done");
    expect(seen.at(-1)?.status).toBe("done");
    const job = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { source status triggerId result } }`, { id: same[0]!.jobId });
    expect(job.data.job).toMatchObject({ source: "A2A", status: "DONE", triggerId: null });
    expect(job.data.job.result.echoed).toHaveProperty("n");
    const audit = await app.runtime.pool.query("select kind from audit_entries where job_id = $1", [same[0]!.jobId]);
    expect(audit.rows).toEqual([{ kind: "a2a" }]);
    const again = await start("a2a", "msg-1", 5);
    expect(again).toEqual({ jobId: same[0]!.jobId, created: false, status: "done" });

    const replay = await gql(app.url, admin, `mutation($id: ID!) { replayJob(id: $id) { source } }`, { id: same[0]!.jobId });
    expect(replay.data.replayJob.source).toBe("REPLAY");
  });

  it("a job of another account is never seen by waitForJob; bad input is a 4xx AppError", async () => {
    const { jobId } = await startAgentJob(app.runtime, { accountId, agentId, source: "mcp", payloadText: "{}", idempotencyKey: null });
    const other = await createAccount(app.url, app.operatorToken, "other", "1");
    expect(await waitForJob(app.runtime, other.accountId, jobId, { until: new Date(Date.now() + 500) })).toBeUndefined();
    await expect(startAgentJob(app.runtime, { accountId, agentId, source: "a2a", payloadText: "not json", idempotencyKey: null })).rejects.toMatchObject({ status: 400 });
    await expect(startAgentJob(app.runtime, { accountId, agentId, source: "a2a", payloadText: "{}", idempotencyKey: "" })).rejects.toMatchObject({ status: 400 });
    await expect(startAgentJob(app.runtime, { accountId, agentId: "agt_gone", source: "a2a", payloadText: "{}", idempotencyKey: null })).rejects.toMatchObject({ code: "not_found" });
  });
});
