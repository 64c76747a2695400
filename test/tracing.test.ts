import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createTestDatabase } from "./helpers/db.js";
import { startHttpsReceiver, type HttpsReceiver } from "./helpers/https-receiver.js";
import { makeTestCa, type TestCa } from "./helpers/tls.js";
import { gql } from "./helpers/graphql.js";
import { triggerFixture, waitForJobEnd } from "./helpers/jobs.js";
import { startFakeOpenAi, startOtlpReceiver, type ReceivedSpan } from "./helpers/otlp-receiver.js";
import { runEntry, until, type Proc } from "./helpers/processes.js";
import { freePort } from "../src/dev/free-port.js";
import { randomBase62 } from "../src/infra/ids.js";

const SERVER = 2; // OTLP SpanKind
const CLIENT = 3;

/**
 * OpenTelemetry across processes: `serve` and `worker` run as separate processes exporting to a
 * local OTLP/HTTP receiver; the model upstream is a loopback OpenAI-compatible server.
 */
describe("OpenTelemetry traces across processes", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let upstream: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let api: Proc;
  let worker: Proc;
  let apiUrl: string;
  let workerMetricsUrl: string;
  let operatorToken: string;
  let ca: TestCa;
  let egressApi: HttpsReceiver; // what ctx.fetch calls: api.test on 127.0.0.2, exempt from the address check

  beforeAll(async () => {
    ca = makeTestCa(["api.test"], ["127.0.0.2"]);
    egressApi = await startHttpsReceiver("127.0.0.2", ca);
    db = await createTestDatabase();
    receiver = await startOtlpReceiver();
    upstream = await startFakeOpenAi();
    operatorToken = `opr_${randomBase62(32)}`;
    const env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      TEMPORAL_TASK_QUEUE: `otel-${randomBase62(6)}`,
      OPERATOR_TOKEN: operatorToken,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      PUBLIC_BASE_URL: "https://gateway.test",
      ALLOW_INSECURE_HTTP: "true",
      PROVIDER_A_API_KEY: "test-a",
      PROVIDER_B_API_KEY: "test-b",
      OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ "provider_a/model-2.5-flash": { baseUrl: upstream.baseUrl, model: "fake" } }),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      EGRESS_ALLOW_ADDRESSES: "127.0.0.2",
      EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.2" }),
      EGRESS_CA_FILE: ca.caFile,
    };
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = runEntry("serve", { ...env, PORT: String(port), OTEL_SERVICE_NAME: "gateway-api", LOG_LEVEL: "debug" });
    const metricsPort = await freePort();
    workerMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    worker = runEntry("worker", { ...env, OTEL_SERVICE_NAME: "gateway-worker", WORKER_METRICS_PORT: String(metricsPort) });
    await until(async () => (await fetch(`${apiUrl}/readyz`).catch(() => undefined))?.status === 200, "serve /readyz");
    await until(() => worker.output().includes("worker polling"), "worker polling");
  });
  afterAll(async () => {
    for (const p of [api, worker]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
    await upstream?.close();
    await receiver?.close();
    await egressApi?.close();
    await db?.drop();
    ca?.cleanup();
  });

  const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const describeTrace = (spans: ReceivedSpan[]) => spans.map((s) => `${s.service}: ${s.name}`).join("\n");

  it("one trace runs from the webhook request through the dispatcher, Temporal and the activity to the upstream call", async () => {
    const { adminToken, triggerId, secret } = await triggerFixture(apiUrl, operatorToken);
    const res = await fetch(`${apiUrl}/api/triggers/${triggerId}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-trigger-secret": secret },
      body: JSON.stringify({ hello: "trace" }),
    });
    expect(res.status).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };
    expect(await waitForJobEnd(apiUrl, adminToken, job_id)).toBe("DONE");

    const webhookSpan = () => receiver.spans.find((s) => s.service === "gateway-api" && s.kind === SERVER && s.name === "POST /api/triggers/:id/webhook");
    await until(() => webhookSpan() !== undefined, "the webhook's server span", 30_000);
    const traceId = webhookSpan()!.traceId;
    // Each process exports in its own batches, the workflow's spans through the worker's sink.
    const expected = [
      "gateway-api: dispatch job",
      "gateway-api: StartWorkflow:agentRun",
      "gateway-worker: RunWorkflow:agentRun",
      "gateway-worker: StartActivity:executeAgentRun",
      "gateway-worker: RunActivity:executeAgentRun",
      "gateway-worker: RunActivity:beginRun",
    ];
    const present = () => expected.filter((n) => describeTrace(inTrace(traceId)).split("\n").includes(n));
    await until(() => present().length === expected.length && inTrace(traceId).some((s) => s.service === "gateway-worker" && s.kind === CLIENT), "the whole trace", 30_000).catch(() => {});
    const spans = inTrace(traceId);
    const names = describeTrace(spans);
    for (const n of expected) expect(names.split("\n"), names).toContain(n);
    // The upstream call is a child of the activity, and the upstream received the same trace.
    const activity = spans.find((s) => s.name === "RunActivity:executeAgentRun")!;
    const upstreamCall = spans.find((s) => s.service === "gateway-worker" && s.kind === CLIENT && s.parentSpanId === activity.spanId);
    expect(upstreamCall, names).toBeDefined();
    expect(upstream.traceparents.some((tp) => tp.split("-")[1] === traceId)).toBe(true);
    // Every span of the trace hangs off another span of it, except the webhook request's root.
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) if (s !== webhookSpan()) expect(ids.has(s.parentSpanId!), `${s.service}: ${s.name}`).toBe(true);
    // The request's log lines name its trace, next to its request id.
    const logged = api
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; requestId?: string; trace_id?: string; req?: { url: string } })
      .find((l) => l.msg === "request completed" && l.req?.url === `/api/triggers/${triggerId}/webhook`);
    expect(logged).toMatchObject({ trace_id: traceId, requestId: res.headers.get("x-request-id") });
    // The trace context was stored with the job (the durable hop).
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const { rows } = await pool.query<{ trace_context: string }>("select trace_context from jobs where id = $1", [job_id]);
      expect(rows[0]!.trace_context.split("-")[1]).toBe(traceId);
    } finally {
      await pool.end();
    }
  });

  it("a script's ctx.chat calls (answered on the sandbox thread's messages) stay in the run's trace", async () => {
    const script = `export default async function run(input, ctx) {
      const r = await ctx.chat({ messages: [{ role: "user", content: "hi" }] });
      return { said: r.content };
    }`;
    const { adminToken, triggerId, secret } = await triggerFixture(apiUrl, operatorToken, script);
    // Twice: the second run reuses the sandbox thread the first one started.
    for (let run = 0; run < 2; run++) {
      const callsBefore = upstream.traceparents.length;
      const traceId = randomBytes(16).toString("hex");
      const res = await fetch(`${apiUrl}/api/triggers/${triggerId}/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-trigger-secret": secret, traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` },
        body: JSON.stringify({ hello: "script", run }),
      });
      expect(res.status).toBe(202);
      const { job_id } = (await res.json()) as { job_id: string };
      expect(await waitForJobEnd(apiUrl, adminToken, job_id)).toBe("DONE");
      expect(upstream.traceparents.length).toBe(callsBefore + 1);
      expect(upstream.traceparents.at(-1)!.split("-")[1], `run ${run}`).toBe(traceId);
      await until(() => ["RunActivity:executeAgentRun", "RunWorkflow:agentRun"].every((n) => inTrace(traceId).some((s) => s.name === n)), "the run's spans", 30_000);
      await until(() => inTrace(traceId).some((s) => s.kind === CLIENT), "the script's upstream span", 30_000);
      const spans = inTrace(traceId);
      const activity = spans.find((s) => s.name === "RunActivity:executeAgentRun")!;
      const upstreamCall = spans.find((s) => s.service === "gateway-worker" && s.kind === CLIENT);
      expect(upstreamCall?.parentSpanId, describeTrace(spans)).toBe(activity.spanId);
    }
  });

  it("a job started later by the dispatcher's sweep continues the trace stored with it", async () => {
    const { adminToken, triggerId } = await triggerFixture(apiUrl, operatorToken);
    const traceId = randomBytes(16).toString("hex");
    const parentSpan = randomBytes(8).toString("hex");
    const jobId = `job_${randomBase62(20)}`;
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      // As if the API had committed it and died before starting it: only the sweep can start it.
      await pool.query(
        `with t as (select account_id, agent_id from triggers where id = $1),
         j as (insert into jobs (id, account_id, agent_id, trigger_id, status, attempts, cost_micros, created_at, trace_context)
               select $2, account_id, agent_id, $1, 'queued', 0, 0, now() - interval '1 minute', $3 from t returning id, account_id)
         insert into audit_entries (id, account_id, job_id, kind, payload, cost_micros, created_at)
         select 'aud_' || $4, account_id, id, 'webhook', '{"late":true}'::jsonb, 0, now() from j`,
        [triggerId, jobId, `00-${traceId}-${parentSpan}-01`, randomBase62(20)],
      );
    } finally {
      await pool.end();
    }
    expect(await waitForJobEnd(apiUrl, adminToken, jobId)).toBe("DONE");
    await until(
      () => ["dispatch job", "RunActivity:executeAgentRun"].every((n) => inTrace(traceId).some((s) => s.name === n)),
      "the late job's spans",
      30_000,
    );
    const spans = inTrace(traceId);
    const dispatch = spans.find((s) => s.name === "dispatch job");
    expect(dispatch, describeTrace(spans)).toBeDefined();
    expect(dispatch!.parentSpanId).toBe(parentSpan);
    expect(describeTrace(spans)).toMatch(/gateway-worker: RunActivity:executeAgentRun/);
  });

  it("a chat request's trace covers its upstream call, and a caller's traceparent is continued", async () => {
    const { adminToken } = await triggerFixture(apiUrl, operatorToken);
    const agents = await gql<{ agents: { id: string }[] }>(apiUrl, adminToken, `{ agents { id } }`);
    const key = await gql<{ createApiKey: { key: string } }>(apiUrl, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agents.data!.agents[0]!.id });
    const callerTrace = randomBytes(16).toString("hex");
    const res = await fetch(`${apiUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key.data!.createApiKey.key}`, traceparent: `00-${callerTrace}-${randomBytes(8).toString("hex")}-01` },
      body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.json();
    await until(() => inTrace(callerTrace).some((s) => s.kind === CLIENT) && inTrace(callerTrace).some((s) => s.kind === SERVER), "the chat's spans", 30_000);
    const spans = inTrace(callerTrace);
    const server = spans.find((s) => s.kind === SERVER && s.name === "POST /api/v1/chat/completions");
    expect(server, describeTrace(spans)).toBeDefined();
    const client = spans.find((s) => s.kind === CLIENT)!;
    expect(client.parentSpanId).toBe(server!.spanId);
    expect(upstream.traceparents.some((tp) => tp.split("-")[1] === callerTrace)).toBe(true);
  });

  it("spans carry no query string and no secret: incoming requests and ctx.fetch egress", async () => {
    const secretValue = `sv-${randomBytes(8).toString("hex")}`;
    const queryMark = `qm-${randomBytes(8).toString("hex")}`;
    const script = `export default async function run(input, ctx) {
      const s = ctx.secrets.HOOK;
      const r = await ctx.fetch("https://api.test:${egressApi.port}/hook/" + s + "?token=" + s + "&mark=" + input.mark, { headers: { "x-note": "plain" } });
      return { status: r.status };
    }`;
    const { adminToken, triggerId, secret } = await triggerFixture(apiUrl, operatorToken, script);
    const agentId = (await gql<{ agents: { id: string }[] }>(apiUrl, adminToken, `{ agents { id } }`)).data!.agents[0]!.id;
    expect((await gql(apiUrl, adminToken, `mutation($a: ID!) { setAgentEgress(agentId: $a, allow: ["api.test"]) { egressAllow } }`, { a: agentId })).errors).toBeUndefined();
    expect((await gql(apiUrl, adminToken, `mutation($a: ID!, $v: String!) { setAgentSecret(agentId: $a, name: "HOOK", value: $v) }`, { a: agentId, v: secretValue })).errors).toBeUndefined();
    const traceId = randomBytes(16).toString("hex");
    // An incoming request whose query string carries the trigger secret and the mark.
    const res = await fetch(`${apiUrl}/api/triggers/${triggerId}/webhook?secret=${encodeURIComponent(secret)}&mark=${queryMark}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-trigger-secret": secret, traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` },
      body: JSON.stringify({ mark: queryMark }),
    });
    expect(res.status).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };
    expect(await waitForJobEnd(apiUrl, adminToken, job_id)).toBe("DONE");
    // The receiver got the full URL: the redaction is in the telemetry only.
    expect(egressApi.requests.some((q) => q.path.includes(`token=${secretValue}`))).toBe(true);
    const egressSpan = () => inTrace(traceId).find((s) => s.service === "gateway-worker" && s.kind === CLIENT && JSON.stringify(s.attributes).includes("api.test"));
    const serverSpan = () => inTrace(traceId).find((s) => s.kind === SERVER && s.name === "POST /api/triggers/:id/webhook");
    await until(() => egressSpan() !== undefined && serverSpan() !== undefined, "the webhook's and the egress call's spans", 30_000);
    const everything = JSON.stringify(receiver.spans);
    for (const leaked of [secretValue, queryMark, secret, encodeURIComponent(secret)]) expect(everything.includes(leaked), leaked).toBe(false);
    // What remains is still useful: host, path and route.
    expect(egressSpan()!.attributes["http.url"]).toBe(`https://api.test:${egressApi.port}/hook/[redacted]?[redacted]`);
    expect(serverSpan()!.attributes["http.target"]).toBe(`/api/triggers/${triggerId}/webhook?[redacted]`);
  });

  it("the standalone worker serves its /metrics on WORKER_METRICS_PORT: Temporal SDK and job metrics", async () => {
    let text = "";
    await until(async () => {
      text = await (await fetch(workerMetricsUrl)).text();
      return /^temporal_\w+/m.test(text);
    }, "the SDK's metrics");
    expect(text).toMatch(/^job_runs_finished_total\{status="done"\} [1-9]\d*$/m);
    expect(text).toMatch(/^job_run_duration_seconds_count\{outcome="ok"\} [1-9]\d*$/m);
  });

  it("both processes still stop cleanly, and logs carry no trace of credentials", async () => {
    api.child.kill("SIGTERM");
    worker.child.kill("SIGTERM");
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
    expect(api.output() + worker.output()).not.toContain(operatorToken);
  });
});
