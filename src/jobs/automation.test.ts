import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../test/helpers/https-receiver.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { spawnWorker, type WorkerProcess } from "../../test/helpers/worker-process.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

/**
 * ctx.fetch egress policy, secrets and run logs, black-box: GraphQL to configure the agent, a
 * webhook to run it, the run record and the database to check what was written. Private
 * addresses are refused (EGRESS_ALLOW_PRIVATE off); 127.0.0.2 is the one exempt "public" API.
 */
describe("automation: egress, secrets, logs", () => {
  let ca: TestCa;
  let api: HttpsReceiver; // the allowlisted API, 127.0.0.2 (exempt)
  let inside: HttpsReceiver; // an internal service on 127.0.0.1 that must never be reached
  let app: TestApp;
  let worker: WorkerProcess;
  let admin: string;
  const SECRET = "sk_live_7Qz\"9x\\Yv$PLUS-unique-value";

  beforeAll(async () => {
    ca = makeTestCa(["api.test", "mirror.test", "evil.test", "localhost"], ["127.0.0.1", "127.0.0.2"]);
    api = await startHttpsReceiver("127.0.0.2", ca);
    inside = await startHttpsReceiver("127.0.0.1", ca);
    const egressEnv = {
      EGRESS_ALLOW_PRIVATE: "false",
      EGRESS_ALLOW_ADDRESSES: "127.0.0.2",
      // mirror.test is another host on the same exempt API: a redirect there crosses hosts.
      EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.2", "mirror.test": "127.0.0.2", "evil.test": "127.0.0.1" }),
      EGRESS_CA_FILE: ca.caFile,
      SCRIPT_MAX_LOG_LINES: "5",
    };
    app = await startTestApp({ env: egressEnv });
    // The worker is its own process with verbose logs, so its whole output can be searched for the secret.
    worker = spawnWorker(app, { ...egressEnv, LOG_LEVEL: "trace" });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "auto", "10"));
  });
  afterAll(async () => {
    await worker?.kill();
    await app?.close();
    await api?.close();
    await inside?.close();
    ca?.cleanup();
  });

  async function agentWith(script: string, allow: string[]): Promise<{ agentId: string; trigger: Awaited<ReturnType<typeof createTrigger>> }> {
    const agentId = await createAgent(app.url, admin, { name: "auto", script });
    const r = await gql(app.url, admin, `mutation($id: ID!, $allow: [String!]!) { setAgentEgress(agentId: $id, allow: $allow) { egressAllow } }`, { id: agentId, allow });
    expect(r.errors).toBeUndefined();
    return { agentId, trigger: await createTrigger(app.url, admin, agentId) };
  }

  async function runJob(t: { id: string; secret: string }, payload: unknown) {
    const r = await postWebhook(app.url, t.id, JSON.stringify(payload), { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    await waitForJob(app.url, r.body.job_id, { "x-trigger-secret": t.secret }, 150_000);
    return (await getJson(`${app.url}/api/runs/${r.body.job_id}`, { "x-trigger-secret": t.secret })).body;
  }

  it("allows an allowlisted HTTPS host; refuses unlisted hosts, http, loopback literals, names resolving to loopback and redirects to loopback; audits each", async () => {
    const { trigger } = await agentWith(
      `export default async function run(input, ctx) {
        const out = {};
        for (const [label, url, init] of input.calls) {
          try { const r = await ctx.fetch(url, init); out[label] = { status: r.status, body: JSON.parse(r.body), idem: r.headers["x-receiver"] }; }
          catch (e) { out[label] = "error: " + e.message; }
        }
        return out;
      }`,
      ["api.test", "evil.test", "127.0.0.1", "*.allowed.test"],
    );
    const p = inside.port;
    const calls = [
      ["ok", `https://api.test:${api.port}/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: { id: 7 } }],
      ["unlisted", `https://other.test:${api.port}/`],
      ["http", `http://api.test:${api.port}/`],
      ["loopbackLiteral", `https://127.0.0.1:${p}/`],
      ["resolvesToLoopback", `https://evil.test:${p}/`],
      ["redirectToLoopback", `https://api.test:${api.port}/redirect?to=${encodeURIComponent(`https://127.0.0.1:${p}/x`)}`],
      ["redirectToName", `https://api.test:${api.port}/redirect?to=${encodeURIComponent(`https://evil.test:${p}/x`)}`],
    ];
    const run = await runJob(trigger, { calls });
    expect(run.status).toBe("done");
    const r = run.result;
    expect(r.ok).toMatchObject({ status: 200, body: { got: '{"id":7}', path: "/orders" }, idem: "yes" });
    expect(r.unlisted).toMatch(/refused: other.test is not on this agent's egress allowlist/);
    expect(r.http).toMatch(/refused: only https/);
    expect(r.loopbackLiteral).toMatch(/refused: 127.0.0.1 resolves to 127.0.0.1, a loopback address/);
    expect(r.resolvesToLoopback).toMatch(/refused: evil.test resolves to 127.0.0.1, a loopback address/);
    expect(r.redirectToLoopback).toMatch(/refused: 127.0.0.1 .*loopback/);
    expect(r.redirectToName).toMatch(/refused: evil.test .*loopback/);
    // Nothing reached the internal service; the API got the call and both redirecting requests.
    expect(inside.requests).toHaveLength(0);
    const okReq = api.requests.find((q) => q.path === "/orders")!;
    expect(okReq.headers["idempotency-key"]).toBe(`${run.job_id}:1:fetch`);
    // The audit entry lists every call, refused ones included.
    const { rows } = await app.runtime.pool.query("select tools_used from audit_entries where job_id = $1", [run.job_id]);
    const tools = rows[0].tools_used as { kind: string; name: string; status: unknown; durationMs: number; costMicros: number }[];
    expect(tools.map((t) => [t.kind, t.name, t.status])).toEqual([
      ["http", `POST api.test:${api.port}`, 200],
      ["http", `GET other.test:${api.port}`, "refused"],
      ["http", `GET api.test:${api.port}`, "refused"],
      ["http", `GET 127.0.0.1:${p}`, "refused"],
      ["http", `GET evil.test:${p}`, "refused"],
      ["http", `GET api.test:${api.port}`, "refused"],
      ["http", `GET api.test:${api.port}`, "refused"],
    ]);
    for (const t of tools) expect(t).toMatchObject({ costMicros: 0, durationMs: expect.any(Number) });
  }, 240_000); // the first run waits for the worker process to start (slow on a loaded machine)

  it("a secret the script logs, returns, sends, journals and throws leaves no copy anywhere the service writes", async () => {
    const { agentId, trigger } = await agentWith(
      `export default async function run(input, ctx) {
        const s = ctx.secrets.API_TOKEN;
        ctx.log("token is", s, { nested: s });
        await ctx.chat({ messages: [{ role: "user", content: "my token: " + s }] });
        const r = await ctx.fetch("https://api.test:${api.port}/hook", { method: "POST", headers: { authorization: "Bearer " + s }, body: "echo " + s });
        const kept = await ctx.step("keep", async () => ({ s, echoed: r.body }));
        if (input.fail) throw new Error("failing with " + s);
        return { s, kept, again: [s + s] };
      }`,
      ["api.test"],
    );
    const set = await gql(app.url, admin, `mutation($id: ID!, $v: String!) { setAgentSecret(agentId: $id, name: "API_TOKEN", value: $v) }`, { id: agentId, v: SECRET });
    expect(set.data?.setAgentSecret).toEqual(["API_TOKEN"]);
    const names = await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { secretNames } }`, { id: agentId });
    expect(names.data?.agent).toEqual({ secretNames: ["API_TOKEN"] });

    const done = await runJob(trigger, { fail: false });
    expect(done.status).toBe("done");
    expect(done.result.s).toBe("[redacted]");
    expect(done.logs[0]).toBe('token is [redacted] {"nested":"[redacted]"}');
    const failed = await runJob(trigger, { fail: true });
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/failing with \[redacted\]/);
    // The receiver did get it: the secret is for the allowlisted API.
    expect(api.requests.filter((q) => q.path === "/hook").map((q) => q.headers.authorization)).toContain(`Bearer ${SECRET}`);

    // Every table of the database, whole.
    const escaped = JSON.stringify(SECRET).slice(1, -1);
    const { rows: tables } = await app.runtime.pool.query<{ t: string }>("select table_name as t from information_schema.tables where table_schema = 'public'");
    for (const { t } of tables) {
      const { rows } = await app.runtime.pool.query(`select * from "${t}"`);
      const text = JSON.stringify(rows);
      expect(text.includes(SECRET) || text.includes(escaped), `table ${t}`).toBe(false);
    }
    // The worker's process output at trace level and Temporal's workflow histories.
    expect(worker.output()).not.toContain(SECRET);
    for (const id of [done.job_id, failed.job_id]) {
      const history = await app.runtime.temporal.client.workflow.getHandle(id).fetchHistory();
      const text = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("utf8") : v));
      expect(text.includes(SECRET) || text.includes(escaped)).toBe(false);
    }
    // GraphQL never returns the value; delete removes it.
    const del = await gql(app.url, admin, `mutation($id: ID!) { deleteAgentSecret(agentId: $id, name: "API_TOKEN") }`, { id: agentId });
    expect(del.data?.deleteAgentSecret).toBe(true);
  }, 240_000);

  it("a redirect to another host drops every header that carries a credential or a secret; a bad header is a script error, not a retried run", async () => {
    const { agentId, trigger } = await agentWith(
      `export default async function run(input, ctx) {
        const s = ctx.secrets.HOOK_TOKEN;
        const headers = {
          authorization: "Bearer " + s, "x-api-key": "k1", "api-key": "k2", "x-github-token": "t", "x-hub-signature": "sig",
          "proxy-authorization": "Basic p", "x-carrier": "v=" + s + ";", "x-plain": "kept", cookie: "c=1",
        };
        const to = (host, path) => "https://api.test:${api.port}/redirect?to=" + encodeURIComponent("https://" + host + ":${api.port}" + path);
        await ctx.fetch(to("mirror.test", "/landed-elsewhere"), { headers });
        await ctx.fetch(to("api.test", "/landed-here"), { headers });
        const bad = {};
        for (const [label, h] of [["name", { "bad header": "x" }], ["value", { "x-ok": "a\\r\\nx-injected: 1" }]]) {
          try { await ctx.fetch("https://api.test:${api.port}/never", { headers: h }); bad[label] = "sent"; }
          catch (e) { bad[label] = e.message; }
        }
        return bad;
      }`,
      ["api.test", "mirror.test"],
    );
    const token = "hook-token-5b1d93f0aa";
    expect((await gql(app.url, admin, `mutation($id: ID!, $v: String!) { setAgentSecret(agentId: $id, name: "HOOK_TOKEN", value: $v) }`, { id: agentId, v: token })).errors).toBeUndefined();
    const run = await runJob(trigger, {});
    expect(run.status).toBe("done");
    expect(run.attempts).toBe(1);
    expect(run.result.name).toMatch(/^ctx.fetch: invalid header "bad header"/);
    expect(run.result.value).toMatch(/^ctx.fetch: invalid header "x-ok"/);
    expect(api.requests.some((q) => q.path === "/never")).toBe(false);
    const elsewhere = api.requests.find((q) => q.path === "/landed-elsewhere")!.headers;
    for (const h of ["authorization", "x-api-key", "api-key", "x-github-token", "x-hub-signature", "proxy-authorization", "x-carrier", "cookie"]) expect(elsewhere[h], h).toBeUndefined();
    expect(elsewhere["x-plain"]).toBe("kept");
    expect(elsewhere["idempotency-key"]).toMatch(/^job_/);
    // The same host keeps them (proxy-authorization is never sent by a script).
    const here = api.requests.find((q) => q.path === "/landed-here")!.headers;
    expect(here).toMatchObject({ authorization: `Bearer ${token}`, "x-api-key": "k1", "x-carrier": `v=${token};`, cookie: "c=1" });
    expect(here["proxy-authorization"]).toBeUndefined();
  }, 240_000);

  it("keeps ctx.log lines with the run, capped with a visible truncation mark (REST and GraphQL)", async () => {
    const { trigger } = await agentWith(`export default async function run(input, ctx) { for (let i = 0; i < 50; i++) ctx.log("line", i); return 1; }`, []);
    const run = await runJob(trigger, {});
    expect(run.logs).toHaveLength(6);
    expect(run.logs.slice(0, 5)).toEqual(["line 0", "line 1", "line 2", "line 3", "line 4"]);
    expect(run.logs[5]).toMatch(/truncated: only the first 5 ctx.log lines are kept/);
    const g = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { logs } }`, { id: run.job_id });
    expect(g.data?.job?.logs ?? g.errors).toEqual(run.logs);
    // The execution activity's timeouts come from configuration (SCRIPT_WALL_TIME_MS + the save margin), not from the workflow's code.
    const history = await app.runtime.temporal.client.workflow.getHandle(run.job_id).fetchHistory();
    const scheduled = history.events!.map((e) => e.activityTaskScheduledEventAttributes).find((a) => a?.activityType?.name === "executeAgentRun")!;
    expect(Number(scheduled.startToCloseTimeout!.seconds)).toBe((app.config.sandbox.wallTimeMs + 60_000) / 1000);
    expect(Number(scheduled.heartbeatTimeout!.seconds)).toBe(5);
  });

  it("a run's heartbeats reach Temporal every second or so, not every 0.8 × the 5 s timeout: a stall of a second or two does not time the attempt out", async () => {
    const { trigger } = await agentWith(`export default async function run(input, ctx) { return (await ctx.fetch(input.url)).status; }`, ["api.test"]);
    const r = await postWebhook(app.url, trigger.id, JSON.stringify({ url: `https://api.test:${api.port}/hold-heartbeats` }), { "x-trigger-secret": trigger.secret });
    expect(r.status).toBe(202);
    const handle = app.runtime.temporal.client.workflow.getHandle(r.body.job_id);
    // While the run waits on its held fetch: every heartbeat time the server records.
    const beats = new Set<number>();
    const until = Date.now() + 60_000;
    while (beats.size < 7 && Date.now() < until) {
      const pending = (await handle.describe().catch(() => undefined))?.raw.pendingActivities?.find((a) => a.activityType?.name === "executeAgentRun");
      const t = pending?.lastHeartbeatTime;
      if (t) beats.add(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6));
      await new Promise((res) => setTimeout(res, 200));
    }
    api.releaseHeld();
    await waitForJob(app.url, r.body.job_id, { "x-trigger-secret": trigger.secret }, 60_000);
    const times = [...beats].sort((a, b) => a - b);
    expect(times.length).toBe(7);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // Throttled to 0.8 × the timeout, the gaps are 4 s: one of them reaching half the timeout fails it.
    expect(Math.max(...gaps), `heartbeat gaps ${gaps.join(", ")} ms`).toBeLessThan(2500);
  });

  it("imports a script file through GraphQL, with errors at line and column and the size limit", async () => {
    const agentId = await createAgent(app.url, admin, { name: "imported" });
    const bad = await gql(app.url, admin, `mutation($id: ID!, $s: String!) { importAgentScript(agentId: $id, source: $s) { id } }`, {
      id: agentId,
      s: "export default async function run(input) {\n  const x = 1;\n  return x +;\n}\n",
    });
    expect(bad.errors?.[0]?.message).toMatch(/SyntaxError.*line 3, column \d+/);
    const big = await gql(app.url, admin, `mutation($id: ID!, $s: String!) { importAgentScript(agentId: $id, source: $s) { id } }`, {
      id: agentId,
      s: `export default async function run() { return 1; }\n//${"x".repeat(app.config.sandbox.maxScriptBytes)}`,
    });
    expect(big.errors?.[0]?.message).toMatch(/over the limit of \d+ bytes \(SCRIPT_MAX_BYTES\)/);
    const ok = await gql(app.url, admin, `mutation($id: ID!, $s: String!) { importAgentScript(agentId: $id, source: $s) { kind script } }`, {
      id: agentId,
      s: "export default async function run(input) { return input; }\n",
    });
    expect(ok.data?.importAgentScript).toEqual({ kind: "AUTOMATION", script: "export default async function run(input) { return input; }\n" });
  });
});
