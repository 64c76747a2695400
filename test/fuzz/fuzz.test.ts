import { createHmac, randomUUID } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { balanceMicros, chargeOf } from "../helpers/balance.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { createAgent, createTrigger, type CreatedTrigger } from "../helpers/webhooks.js";
import { SUPPORTED_MODELS } from "../../src/config/models.js";
import { a2aBody, a2aPushConfigBody, bodyText, chatBody, contentType, graphqlBody, graphqlOperation, headerValue, jsonValue, modelId, oddString, responsesBody, scheduleInput } from "./arbitraries.js";
import { answerOf, jsonRpcProblemsOf, problemsOf, type Answer } from "./envelope.js";
import { rawExchange } from "./raw-http.js";
import { mcpBody, mcpProblemsOf, protocolVersion, standardHeaders } from "./mcp.js";

/**
 * Generated malformed and hostile requests over every public route (issue 8): chat completions,
 * responses and models; A2A (both protocol versions, both kinds of agent); the MCP servers of
 * agents (JSON-RPC over Streamable HTTP, keys of other agents, jobs of others); webhooks with each auth scheme; the job endpoints; GraphQL over HTTP and
 * graphql-ws; raw HTTP oddities on sockets; poison payloads through real runs. Every answer must
 * be below 500 and in the documented error shape, no process error may escape, and afterwards
 * the service is ready and runs a normal webhook to `done`.
 *
 * FUZZ_SEED reproduces a run, FUZZ_RUNS scales it (`FUZZ_RUNS=10000 npx vitest run test/fuzz`).
 * The default is a bounded share for `npm test`. The seed and the count are printed.
 */
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 1200);
const SHARE = { chat: 0.14, responses: 0.05, models: 0.04, webhooks: 0.24, jobs: 0.1, graphql: 0.2, ws: 0.05, raw: 0.1, poison: 0.08, stored: 0.05, storedChat: 0.03, a2a: 0.15, a2aPush: 0.06, mcp: 0.08, schedules: 0.04 };
const runsOf = (k: keyof typeof SHARE) => Math.max(5, Math.round(RUNS * SHARE[k]));
/** Per-test time limit, scaled with the run count (a liveness bound for a loaded machine, not a timing assertion). */
const LIMIT = 120_000 + RUNS * 100;

let sent = 0;
const escaped: unknown[] = [];
const onEscaped = (err: unknown) => escaped.push(err);

function check(path: string, a: Answer, what: string): void {
  const problems = problemsOf(path, a);
  if (problems.length > 0) throw new Error(`${what} → ${a.status}: ${problems.join("; ")}\n${a.body.slice(0, 600)}`);
}

/** fast-check with this suite's seed; the counterexample in a failure is cut to a readable size. */
async function property<T>(name: keyof typeof SHARE, offset: number, arb: fc.Arbitrary<T>, run: (v: T) => Promise<void>): Promise<void> {
  const seed = (SEED + offset) | 0;
  let failure = "";
  const recorded = async (v: T) => {
    try {
      await run(v);
    } catch (err) {
      failure = String((err as Error)?.message ?? err);
      throw err;
    }
  };
  try {
    await fc.assert(fc.asyncProperty(arb, recorded), { seed, numRuns: runsOf(name), endOnFailure: true });
  } catch (err) {
    const report = String((err as Error).message);
    throw new Error(`[fuzz ${name}] ${failure.slice(0, 1500)}\nreproduce: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} (property seed ${seed})\n${report.slice(0, 1500)}`);
  }
}

async function send(url: string, init: Omit<RequestInit, "body"> & { path: string; body?: string | Uint8Array }): Promise<Answer> {
  sent++;
  const res = await fetch(url + init.path, { ...init, body: init.body as BodyInit | undefined, signal: AbortSignal.timeout(60_000) }).catch((err: Error & { cause?: { code?: string; message?: string } }) => {
    throw new Error(`${init.method} ${init.path.slice(0, 200)}: ${err.message} (${err.cause?.code ?? ""} ${err.cause?.message ?? ""})`);
  });
  return answerOf(res);
}

/** encodeURIComponent refuses lone surrogates; send U+FFFD for them (raw bytes are the raw-socket property's job). */
const enc = (s: string) => encodeURIComponent(s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD"));

describe("fuzz: generated hostile requests on every public route", () => {
  let app: TestApp;
  let admin: string;
  let otherAdmin: string;
  let apiKey: string;
  let chatAgent: string;
  let runner: string;
  let runnerKey: string;
  let foreignKey: string;
  let trg: CreatedTrigger;
  let open: CreatedTrigger;
  let inactive: CreatedTrigger;
  const accepted: string[] = [];
  const poisoned: string[] = [];
  const a2a = { chat: "", job: "", jobKey: "", foreignKey: "", foreignTask: "", tasks: [] as string[] };

  beforeAll(async () => {
    process.on("uncaughtException", onEscaped);
    process.on("unhandledRejection", onEscaped);
    process.stderr.write(`[fuzz] FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}\n`);
    app = await startTestApp({ worker: true, env: { SCRIPT_CPU_TIME_MS: "5000", SCRIPT_WALL_TIME_MS: "5000" } });
    const acct = await createAccount(app.url, app.operatorToken, "fuzz", "100000");
    admin = acct.adminToken;
    otherAdmin = (await createAccount(app.url, app.operatorToken, "other", "1")).adminToken;
    chatAgent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "chat" }) { id } }`)).data!.createAgent.id as string;
    const key = await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "fuzz", rateLimitPerMinute: 100000) { key } }`, { a: chatAgent });
    apiKey = key.data!.createApiKey.key;
    const scripted = await createAgent(app.url, admin, {
      name: "echo",
      script: `export default async function run(input, ctx) {
        ctx.log("got", typeof input);
        if (input && typeof input === "object" && input.fail) throw new Error(String(input.fail));
        return { kind: typeof input, size: JSON.stringify(input).length };
      }`,
    });
    trg = await createTrigger(app.url, admin, scripted);
    a2a.chat = chatAgent;
    a2a.job = scripted;
    a2a.jobKey = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "fuzz-a2a", rateLimitPerMinute: 100000) { key } }`, { a: scripted })).data!.createApiKey.key;
    const foreignAgent = await createAgent(app.url, otherAdmin, { name: "foreign", script: "export default async function run() { return 1; }" });
    a2a.foreignKey = (await gql(app.url, otherAdmin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "f") { key } }`, { a: foreignAgent })).data!.createApiKey.key;
    const foreignTask = await fetch(`${app.url}/api/a2a/${foreignAgent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${a2a.foreignKey}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "x" }] }, configuration: { returnImmediately: true } } }),
    });
    a2a.foreignTask = ((await foreignTask.json()) as { result: { task: { id: string } } }).result.task.id;
    // An automation agent reached over MCP only: the webhook jobs (of "echo") are another agent's to it.
    runner = await createAgent(app.url, admin, { name: "mcp runner", script: `export default async function run(input) { return { kind: typeof input }; }` });
    const keyOf = async (agent: string) =>
      (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "fuzz", rateLimitPerMinute: 100000) { key } }`, { a: agent })).data!.createApiKey.key as string;
    runnerKey = await keyOf(runner);
    foreignKey = await keyOf(scripted);
    open = await createTrigger(app.url, admin, scripted);
    await gql(app.url, admin, `mutation($id: ID!) { updateTrigger(id: $id, secretRequired: false) { id } }`, { id: open.id });
    inactive = await createTrigger(app.url, admin, scripted);
    await gql(app.url, admin, `mutation($id: ID!) { setTriggerActive(id: $id, active: false) { id } }`, { id: inactive.id });
  });

  afterAll(async () => {
    process.off("uncaughtException", onEscaped);
    process.off("unhandledRejection", onEscaped);
    process.stderr.write(`[fuzz] sent ${sent} generated requests (FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS})\n`);
    await app?.close();
  }, LIMIT);

  it("chat completions, responses and models", async () => {
    const auth = fc.constantFrom("bearer", "x-api-key", "bad-key", "garbage", "none", "admin");
    const authHeaders = (a: string): Record<string, string> =>
      ({ bearer: { authorization: `Bearer ${apiKey}` }, "x-api-key": { "x-api-key": apiKey }, "bad-key": { authorization: "Bearer a2a_nope" }, garbage: { authorization: "Bearer \u0001x" }, none: {}, admin: { authorization: `Bearer ${admin}` } })[a]!;
    const authArb = auth.map((a) => (a === "garbage" ? "none" : a));

    await property("chat", 1, fc.record({ body: chatBody, ct: contentType, auth: authArb }), async ({ body, ct, auth: a }) => {
      const res = await send(app.url, { path: "/api/v1/chat/completions", method: "POST", headers: { ...(ct ? { "content-type": ct } : {}), ...authHeaders(a) }, body });
      check("/api/v1/chat/completions", res, "POST /api/v1/chat/completions");
    });
    await property("responses", 2, fc.record({ body: responsesBody, auth: authArb, id: fc.oneof(oddString, fc.constant("resp_nope")) }), async ({ body, auth: a, id }) => {
      const res = await send(app.url, { path: "/api/v1/responses", method: "POST", headers: { "content-type": "application/json", ...authHeaders(a) }, body });
      check("/api/v1/responses", res, "POST /api/v1/responses");
      const get = await send(app.url, { path: `/api/v1/responses/${enc(id)}`, method: "GET", headers: authHeaders(a) });
      check("/api/v1/responses/x", get, "GET /api/v1/responses/:id");
    });
    await property("models", 3, fc.record({ id: fc.oneof(modelId, oddString), auth: authArb, method: fc.constantFrom("GET", "POST", "DELETE", "PUT") }), async ({ id, auth: a, method }) => {
      for (const path of ["/api/v1/models", `/api/v1/models/${enc(id)}`, `/api/v1/${enc(id)}`]) {
        const res = await send(app.url, { path, method, headers: authHeaders(a) });
        check(path, res, `${method} ${path}`);
      }
    });
  }, LIMIT);

  it("A2A: malformed JSON-RPC, unknown methods, wrong versions, oversized parts, foreign tasks and keys; a flood of subscriptions", async () => {
    const keyOf = (k: string): Record<string, string> =>
      ({ own: { authorization: `Bearer ${apiKey}` }, "own-x": { "x-api-key": apiKey }, job: { authorization: `Bearer ${a2a.jobKey}` }, foreign: { authorization: `Bearer ${a2a.foreignKey}` }, bad: { authorization: "Bearer a2a_nope" }, none: {} })[k]!;
    const ids = () => [...a2a.tasks, a2a.foreignTask, "job_0000", "tsk_0000"];
    const collect = (a: Answer) => {
      for (const m of a.body.matchAll(/"id":"((?:job|tsk)_[0-9A-Za-z]+)"/g)) if (m[1] !== a2a.foreignTask && !a2a.tasks.includes(m[1]!)) a2a.tasks.push(m[1]!);
    };
    await property(
      "a2a",
      12,
      fc.record({
        agent: fc.constantFrom("chat", "job", "job", "unknown", "odd"),
        key: fc.constantFrom("own", "own-x", "job", "job", "foreign", "bad", "none"),
        version: fc.oneof({ weight: 6, arbitrary: fc.constantFrom("", "1.0", "0.3", "1.0", "0.3.0") }, { weight: 1, arbitrary: fc.constantFrom("2.0", "0.2", "1", "x", "1.0.0") }),
        body: a2aBody(ids),
        odd: oddString,
        card: fc.boolean(),
      }),
      async ({ agent, key, version, body, odd, card }) => {
        const id = agent === "chat" ? a2a.chat : agent === "job" ? a2a.job : agent === "unknown" ? "agt_0000000000000000000000" : enc(odd);
        const headers = { "content-type": "application/json", ...keyOf(agent === "chat" && key === "job" ? "own" : agent === "job" && key === "own" ? "job" : key), ...(version ? { "A2A-Version": version } : {}) };
        const res = await send(app.url, { path: `/api/a2a/${id}`, method: "POST", headers, body });
        // An empty id is no agent route at all (the REST 404), nor are "." and "..": dot segments
        // the client resolves away before sending (RFC 3986 §5.2.4), to /api/a2a/ and /api/.
        const routed = id !== "" && id !== "." && id !== "..";
        const problems = routed ? jsonRpcProblemsOf(res) : problemsOf(`/api/a2a/${id}`, res);
        if (problems.length > 0) throw new Error(`POST /api/a2a/${agent} (${key}, v${version}) → ${res.status}: ${problems.join("; ")}\n${res.body.slice(0, 600)}\nbody: ${String(body).slice(0, 300)}`);
        collect(res);
        if (card) {
          const path = `/api/a2a/${id}/.well-known/${odd.length % 2 ? "agent.json" : "agent-card.json"}`;
          check(path, await send(app.url, { path, method: "GET", headers: version ? { "A2A-Version": version } : {} }), `GET ${path}`);
        }
      },
    );

    // A flood of subscriptions, on running, ended, foreign and unknown tasks at once.
    const rpc = (k: string, body: unknown) =>
      send(app.url, { path: `/api/a2a/${a2a.job}`, method: "POST", headers: { "content-type": "application/json", "A2A-Version": "1.0", ...keyOf(k) }, body: JSON.stringify(body) });
    const started = await rpc("job", { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ data: { flood: true } }] }, configuration: { returnImmediately: true } } });
    const running = (JSON.parse(started.body) as { result: { task: { id: string } } }).result.task.id;
    a2a.tasks.push(running);
    const targets = [running, running, running, a2a.foreignTask, "job_0000", ...a2a.tasks.slice(0, 5)];
    const flood = await Promise.all(Array.from({ length: 200 }, (_, i) => rpc(i % 7 === 0 ? "foreign" : "job", { jsonrpc: "2.0", id: i, method: "SubscribeToTask", params: { id: targets[i % targets.length] } })));
    sent += flood.length;
    for (const a of flood) {
      const problems = jsonRpcProblemsOf(a);
      if (problems.length > 0) throw new Error(`SubscribeToTask flood → ${a.status}: ${problems.join("; ")}\n${a.body.slice(0, 400)}`);
    }

    // Nothing lost: every task an answer named exists and ends (jobs done/failed, chat turns completed/failed).
    const deadline = Date.now() + LIMIT / 2;
    let open_: string[] = [];
    do {
      const { rows } = await app.runtime.pool.query<{ id: string; status: string | null; state: string | null }>(
        "select t.id, j.status, t.state from a2a_tasks t left join jobs j on j.id = t.id where t.id = any($1::text[])",
        [a2a.tasks],
      );
      expect(rows.map((r) => r.id).sort()).toEqual([...a2a.tasks].sort());
      open_ = rows.filter((r) => (r.status !== null ? !["done", "failed"].includes(r.status) : r.state === "working")).map((r) => r.id);
      if (open_.length > 0) await new Promise((r) => setTimeout(r, 500));
    } while (open_.length > 0 && Date.now() < deadline);
    expect(open_).toEqual([]);
  }, LIMIT);

  it("A2A push configs: create, get, list and delete with hostile urls, tokens, authentication objects, ids, page tokens, huge and deep values", async () => {
    const call = (body: string, legacy: boolean, key = a2a.jobKey) =>
      send(app.url, { path: `/api/a2a/${a2a.job}`, method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "A2A-Version": legacy ? "0.3" : "1.0" }, body });
    const own: string[] = [];
    for (let i = 0; i < 2; i++) {
      const started = await call(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "push" }] }, configuration: { returnImmediately: true } } }), false);
      own.push((JSON.parse(started.body) as { result: { task: { id: string } } }).result.task.id);
    }
    const configs: string[] = ["pnc_0000"];
    // One valid config per own task, so the generated calls aim at real ids whatever they make themselves.
    for (const taskId of own) {
      const made = await call(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "CreateTaskPushNotificationConfig", params: { taskId, url: "https://hooks.invalid/seed", token: "seed" } }), false);
      const id = (JSON.parse(made.body) as { result?: { id?: string } }).result?.id;
      expect(id, made.body).toMatch(/^pnc_/);
      configs.push(id!);
    }
    await property(
      "a2aPush",
      13,
      a2aPushConfigBody(() => [...own, a2a.foreignTask, "job_0000"], () => configs),
      async ({ legacy, body }) => {
        const res = await call(body, legacy);
        const problems = jsonRpcProblemsOf(res);
        if (problems.length > 0) throw new Error(`push config call (v${legacy ? "0.3" : "1.0"}) → ${res.status}: ${problems.join("; ")}\n${res.body.slice(0, 600)}\nbody: ${body.slice(0, 300)}`);
        for (const m of res.body.matchAll(/"(pnc_[0-9A-Za-z]+)"/g)) if (!configs.includes(m[1]!)) configs.push(m[1]!);
      },
    );
    // The foreign task has no config, and the cap held.
    const { rows } = await app.runtime.pool.query<{ task_id: string; n: number }>("select task_id, count(*)::int as n from a2a_push_configs group by task_id");
    expect(rows.find((r) => r.task_id === a2a.foreignTask)).toBeUndefined();
    for (const r of rows) expect(r.n).toBeLessThanOrEqual(app.config.a2a.pushConfigsPerTask);
  }, LIMIT);

  it("webhooks with every auth scheme, and the job endpoints", async () => {
    const scheme = fc.constantFrom("none", "secret", "wrong-secret", "hmac-ts", "hmac-bare", "hmac-stale", "hmac-mangled", "sw", "sw-mangled", "sw-stale", "all-wrong");
    const sign = (s: string, body: string | Uint8Array, secret: string): Record<string, string> => {
      const buf = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
      const now = Math.floor(Date.now() / 1000);
      const mac = (pre: string) => createHmac("sha256", secret).update(pre).update(buf).digest("hex");
      const wh = () => new Webhook(secret);
      switch (s) {
        case "secret":
          return { "x-trigger-secret": secret };
        case "wrong-secret":
          return { "x-trigger-secret": `${secret}x` };
        case "hmac-ts":
          return { "x-service-timestamp": String(now), "x-service-signature": `sha256=${mac(`${now}.`)}` };
        case "hmac-bare":
          return { "x-service-signature": mac("") };
        case "hmac-stale":
          return { "x-service-timestamp": String(now - 301), "x-service-signature": mac(`${now - 301}.`) };
        case "hmac-mangled":
          return { "x-service-timestamp": String(now), "x-service-signature": `sha256=${mac(`${now}.`).slice(1)}0` };
        case "sw": {
          const id = `msg_${randomUUID()}`;
          return { "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": wh().sign(id, new Date(now * 1000), buf) };
        }
        case "sw-mangled": {
          const id = `msg_${randomUUID()}`;
          return { "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": `v1,${"A".repeat(43)}= v2,x` };
        }
        case "sw-stale": {
          const id = `msg_${randomUUID()}`;
          const then = new Date((now - 600) * 1000);
          return { "webhook-id": id, "webhook-timestamp": String(now - 600), "webhook-signature": wh().sign(id, then, buf) };
        }
        case "all-wrong":
          return { "x-trigger-secret": "", "x-service-signature": "zz", "x-service-timestamp": "-1", "webhook-id": "", "webhook-timestamp": "x", "webhook-signature": "v1," };
        default:
          return {};
      }
    };
    const target = fc.constantFrom("main", "main", "main", "open", "inactive", "unknown", "garbage");
    const idOf = (t: string, garbage: string) => ({ main: trg.id, open: open.id, inactive: inactive.id, unknown: "trg_0000000000000000000000", garbage: enc(garbage) })[t]!;
    const extra = fc.dictionary(fc.constantFrom("idempotency-key", "content-encoding", "x-service-timestamp", "webhook-id", "x-forwarded-proto", "accept", "expect"), headerValue, { maxKeys: 2 });

    await property(
      "webhooks",
      4,
      fc.record({ t: target, garbage: oddString, body: bodyText, ct: contentType, s: scheme, extra }),
      async ({ t, garbage, body, ct, s, extra: more }) => {
        const secret = t === "open" ? open.secret : t === "inactive" ? inactive.secret : trg.secret;
        const headers: Record<string, string> = { ...more, ...(ct ? { "content-type": ct } : {}), ...sign(s, body, secret) };
        if (headers.expect !== undefined) delete headers.expect; // fetch refuses Expect
        const path = `/api/triggers/${idOf(t, garbage)}/webhook`;
        const res = await send(app.url, { path, method: "POST", headers, body });
        check(path, res, `POST webhook (${t}, ${s})`);
        if (res.status === 202) accepted.push(JSON.parse(res.body).job_id);
      },
    );

    const cred = fc.constantFrom("secret", "admin", "other-admin", "operator", "garbage", "none", "other-secret");
    const credHeaders = (c: string): Record<string, string> =>
      ({ secret: { "x-trigger-secret": trg.secret }, admin: { authorization: `Bearer ${admin}` }, "other-admin": { authorization: `Bearer ${otherAdmin}` }, operator: { authorization: `Bearer ${app.operatorToken}` }, garbage: { authorization: "Bearer adm_x", "x-trigger-secret": "x" }, none: {}, "other-secret": { "x-trigger-secret": open.secret } })[c]!;
    await property(
      "jobs",
      5,
      fc.record({ pick: fc.nat(), kind: fc.constantFrom("accepted", "made-up", "odd"), odd: oddString, c: cred, tail: fc.constantFrom("status", "result", "runs", "nope", ""), method: fc.constantFrom("GET", "GET", "GET", "POST", "DELETE") }),
      async ({ pick, kind, odd, c, tail, method }) => {
        const id = kind === "accepted" && accepted.length > 0 ? accepted[pick % accepted.length]! : kind === "made-up" ? `job_${odd.replace(/[^0-9A-Za-z]/g, "").slice(0, 30) || "x"}` : odd;
        const path = tail === "runs" ? `/api/runs/${enc(id)}` : `/api/agent-run-jobs/${enc(id)}${tail ? `/${tail}` : ""}`;
        const res = await send(app.url, { path, method, headers: credHeaders(c) });
        check(path, res, `${method} ${path}`);
      },
    );
  }, LIMIT);

  it("MCP: malformed JSON-RPC, unknown methods, any protocol version, huge arguments, foreign jobs and keys", async () => {
    const auth = fc.constantFrom("own", "own", "own", "foreign", "bad", "none", "x-api-key");
    const target = fc.constantFrom("chat", "runner", "runner", "unknown", "garbage");
    await property(
      "mcp",
      12,
      fc.record({
        a: auth,
        t: target,
        garbage: oddString,
        method: fc.constantFrom("POST", "POST", "POST", "POST", "GET", "DELETE", "PUT"),
        accept: fc.constantFrom("application/json, text/event-stream", "application/json, text/event-stream", "application/json", "*/*", ""),
        ct: fc.constantFrom("application/json", "application/json", "text/plain", ""),
        version: fc.option(protocolVersion),
        session: fc.option(oddString),
        // 2026-07-28's standard headers, mirrored from the body as its clients send them.
        standard: fc.boolean(),
        body: mcpBody(() => accepted),
      }),
      async ({ a, t, garbage, method, accept, ct, version, session, standard, body }) => {
        const agent = { chat: chatAgent, runner, unknown: "agt_0000000000000000000000", garbage: `g${enc(garbage)}` }[t]!;
        const own = t === "chat" ? apiKey : runnerKey;
        const headers: Record<string, string> = {
          ...({ own: { authorization: `Bearer ${own}` }, "x-api-key": { "x-api-key": own }, foreign: { authorization: `Bearer ${foreignKey}` }, bad: { authorization: "Bearer a2a_nope" }, none: {} } as Record<string, Record<string, string>>)[a],
          ...(accept ? { accept } : {}),
          ...(ct ? { "content-type": ct } : {}),
          ...(version !== null ? { "mcp-protocol-version": version.replace(/[^\x20-\x7e]/g, "?") } : {}),
          ...(session !== null ? { "mcp-session-id": session.replace(/[^\x21-\x7e]/g, "x") || "x" } : {}),
          ...(standard ? standardHeaders(body) : {}),
        };
        sent++;
        const path = `/api/mcp/${agent}`;
        const res = await fetch(app.url + path, { method, headers, body: method === "GET" || method === "DELETE" ? undefined : body, signal: AbortSignal.timeout(90_000) });
        const answer = await answerOf(res);
        const what = `${method} ${path} (${a}) ${body.slice(0, 300)}`;
        const problems = mcpProblemsOf(answer);
        if (problems.length > 0) throw new Error(`${what} → ${answer.status}: ${problems.join("; ")}\n${answer.body.slice(0, 600)}`);
        const authorized = (a === "own" || a === "x-api-key") && (t === "chat" || t === "runner");
        if (!authorized) {
          expect(answer.status, what).toBe(401);
          expect(res.headers.get("www-authenticate"), what).toMatch(/^Bearer realm="agent-gateway", resource_metadata="/);
        }
        // A job of another agent (the webhook jobs of "echo") is never shown to the runner's key.
        let call: any;
        try {
          call = JSON.parse(body);
        } catch {
          call = undefined;
        }
        if (authorized && t === "runner" && answer.status === 200 && call?.params?.name === "get_job" && accepted.includes(call?.params?.arguments?.job_id)) {
          expect(answer.body, what).toContain("job_not_found");
        }
      },
    );
    // Every job the webhooks started (another agent's, to the runner) is not found through the runner's key.
    for (const jobId of accepted.slice(0, 50)) {
      sent++;
      const res = await fetch(`${app.url}/api/mcp/${runner}`, {
        method: "POST",
        headers: { authorization: `Bearer ${runnerKey}`, accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_job", arguments: { job_id: jobId } } }),
      });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(body, jobId).toContain("job_not_found");
      expect(body, jobId).not.toContain('"status"');
    }
  }, LIMIT);

  it("strings that reach the database (ids, names, messages) carrying NUL or odd Unicode: a 4xx, never a 500, and chat costs only its answers", async () => {
    const agentId = (await gql(app.url, admin, `mutation { createAgent(input: { name: "db-strings" }) { id } }`)).data!.createAgent.id as string;
    const text = fc.oneof(oddString, oddString.map((x) => `${x}\u0000${x}`));
    const gqlOps = [
      "query($s: ID!) { job(id: $s) { id } }",
      "query($s: ID!) { trigger(id: $s) { id } }",
      "query($s: ID!) { agent(id: $s) { id } }",
      "query($s: ID!) { thread(id: $s) { id } }",
      `mutation($s: String!) { createAgent(input: { name: $s, instructions: $s }) { id } }`,
      `mutation($s: String!) { createApiKey(agentId: "${agentId}", name: $s) { key } }`,
      `mutation($s: String) { createTrigger(agentId: "${agentId}", description: $s) { secret } }`,
      `mutation($s: String!) { setTriggerSecret(id: "${trg.id}", secret: $s) { id } }`,
    ];
    await property("stored", 10, fc.record({ op: fc.constantFrom(...gqlOps), s: text }), async ({ op, s: value }) => {
      const res = await send(app.url, { path: "/graphql", method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${admin}` }, body: JSON.stringify({ query: op, variables: { s: value } }) });
      check("/graphql", res, `POST /graphql ${op} with ${JSON.stringify(value).slice(0, 80)}`);
    });
    // Chat that reaches the thread store is also held to the money oracle (issue 17): on an
    // account of its own, the balance (as its owner reads it) moves by exactly the charge of each
    // turn answered 200, and not at all for a refused one: a hold left behind by a turn that
    // failed after the model was paid for shows here, whatever the status was.
    const chatModel = SUPPORTED_MODELS[0];
    const payer = await createAccount(app.url, app.operatorToken, "fuzz-money", "1000");
    const payerAgent = (await gql(app.url, payer.adminToken, `mutation { createAgent(input: { name: "money" }) { id } }`)).data!.createAgent.id as string;
    const payerKey = (await gql(app.url, payer.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "fuzz", rateLimitPerMinute: 100000) { key } }`, { a: payerAgent })).data!.createApiKey.key as string;
    const fields = ["thread_id", "content", "user", "previous_response_id", "input", "instructions", "metadata", "tools", "text.format", "tool_call_id", "arguments"] as const;
    const responsesFields = new Set<string>(["previous_response_id", "input", "instructions", "metadata", "tools", "text.format"]);
    const chatBodyWith = (field: string, value: string): Record<string, unknown> => {
      const messages: unknown[] = [{ role: "user", content: field === "content" ? value : "hi" }];
      if (field === "tool_call_id" || field === "arguments") {
        const id = field === "tool_call_id" ? value : "call_1";
        messages.push({ role: "assistant", tool_calls: [{ id, type: "function", function: { name: "f", arguments: field === "arguments" ? value : "{}" } }] }, { role: "tool", tool_call_id: id, content: "ok" });
      }
      return { model: chatModel, messages, ...(field === "thread_id" || field === "user" ? { [field]: value } : {}) };
    };
    const responsesBodyWith = (field: string, value: string): Record<string, unknown> => ({
      model: chatModel,
      input: field === "input" ? value : "hi",
      ...(field === "previous_response_id" ? { previous_response_id: value } : {}),
      ...(field === "instructions" ? { instructions: value } : {}),
      ...(field === "metadata" ? { metadata: { [value.slice(0, 64)]: value.slice(0, 512) } } : {}),
      ...(field === "tools" ? { tools: [{ type: "function", name: "f", description: value }] } : {}),
      ...(field === "text.format" ? { text: { format: { type: "json_schema", name: "x", schema: { type: "object", properties: { a: { type: "string", description: value } } } } } } : {}),
    });
    await property("storedChat", 11, fc.record({ field: fc.constantFrom(...fields), s: text }), async ({ field, s: value }) => {
      const responses = responsesFields.has(field);
      const body = responses ? responsesBodyWith(field, value) : chatBodyWith(field, value);
      const path = responses ? "/api/v1/responses" : "/api/v1/chat/completions";
      const before = await balanceMicros(app.url, payer.adminToken);
      const res = await send(app.url, { path, method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${payerKey}` }, body: JSON.stringify(body) });
      check(path, res, `POST ${path} ${field}=${JSON.stringify(value).slice(0, 80)}`);
      const charge = res.status === 200 ? chargeOf(app.config, chatModel, JSON.parse(res.body).usage) : 0;
      const after = await balanceMicros(app.url, payer.adminToken);
      if (after !== before - charge) {
        throw new Error(`POST ${path} ${field}=${JSON.stringify(value).slice(0, 80)} → ${res.status}: the balance moved by ${before - after} micro-USD, the answered charge is ${charge}\n${res.body.slice(0, 300)}`);
      }
    });
  }, LIMIT);

  it("schedules: hostile cron, every, time zone, payload (huge, deep), overlap and description are BAD_USER_INPUT, never a 5xx", async () => {
    const agentId = await createAgent(app.url, admin, { name: "fuzz clock", script: "export default async function run(input) { return 1; }" });
    const CREATE = "mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id every cron timezone overlap } }";
    await property("schedules", 12, fc.record({ input: scheduleInput, foreignAgent: fc.boolean() }), async ({ input, foreignAgent }) => {
      const i = { ...input, agentId: foreignAgent ? a2a.job.replace(/.$/, "_") : agentId };
      const body = JSON.stringify({ query: CREATE, variables: { i } });
      const what = `createSchedule ${body.length > 300 ? `${body.slice(0, 300)}…` : body}`;
      const res = await send(app.url, { path: "/graphql", method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${admin}` }, body });
      check("/graphql", res, what);
      const parsed = res.status === 200 ? (JSON.parse(res.body) as { data?: { createSchedule?: { id: string } | null }; errors?: { extensions?: { code?: string } }[] }) : undefined;
      const id = parsed?.data?.createSchedule?.id;
      if (id) {
        // Accepted: it is a schedule like any other (paused, resumed, deleted).
        for (const op of ["pauseSchedule(id: $id) { id }", "resumeSchedule(id: $id) { id }", "deleteSchedule(id: $id)"]) {
          const r = await gql(app.url, admin, `mutation($id: ID!) { ${op} }`, { id });
          if (r.errors) throw new Error(`${what} → accepted, then ${op}: ${JSON.stringify(r.errors).slice(0, 300)}`);
        }
      } else if (res.status === 200) {
        // Refused by the resolver: the input's fault, never another kind of error. (A 4xx before
        // GraphQL — JSON nested past 128 levels, a body over the limit — is judged by check().)
        const code = parsed?.errors?.[0]?.extensions?.code;
        if (!["BAD_USER_INPUT", "NOT_FOUND"].includes(String(code))) throw new Error(`${what} → ${res.status} ${code}: ${res.body.slice(0, 300)}`);
      }
    });
  }, LIMIT);

  it("GraphQL over HTTP: depth, width, aliases, fragments, variables", async () => {
    const auth = fc.constantFrom("admin", "operator", "none", "garbage");
    const authHeaders = (a: string): Record<string, string> => ({ admin: { authorization: `Bearer ${admin}` }, operator: { authorization: `Bearer ${app.operatorToken}` }, none: {}, garbage: { authorization: "Bearer adm_nope" } })[a]!;
    await property("graphql", 6, fc.record({ body: graphqlBody, a: auth, ct: contentType, get: fc.boolean(), q: graphqlOperation }), async ({ body, a, ct, get, q }) => {
      const res = get
        ? await send(app.url, { path: `/graphql?query=${enc(q)}`, method: "GET", headers: { ...authHeaders(a), "apollo-require-preflight": "true" } })
        : await send(app.url, { path: "/graphql", method: "POST", headers: { ...(ct ? { "content-type": ct } : {}), ...authHeaders(a) }, body });
      check("/graphql", res, get ? `GET /graphql?query=${q.slice(0, 300)}` : `POST /graphql ${body.length > 300 ? `${String(body).slice(0, 300)}…` : String(body)}`);
    });
  }, LIMIT);

  it("graphql-ws subscriptions: malformed protocol messages, queries and auth", async () => {
    const wsUrl = `${app.url.replace(/^http/, "ws")}/graphql`;
    const init = fc.oneof(
      fc.constant({ type: "connection_init", payload: { authorization: `Bearer ${admin}` } } as unknown),
      fc.constant({ type: "connection_init", payload: { authorization: "Bearer adm_nope" } } as unknown),
      fc.record({ type: fc.constant("connection_init"), payload: jsonValue }),
      jsonValue,
    );
    const msg = fc.oneof(
      fc.record({ id: fc.oneof(fc.constant("1"), oddString), type: fc.constant("subscribe"), payload: fc.record({ query: fc.oneof(graphqlOperation, fc.constant("subscription { jobStatusChanged { jobId status } }")), variables: jsonValue }, { requiredKeys: [] }) }),
      fc.record({ id: fc.oneof(fc.constant("1"), oddString), type: fc.constantFrom("complete", "ping", "pong", "next", "error", "nope") }),
      jsonValue,
    );
    const deep = fc.integer({ min: 100, max: 50_000 }).map((d) => `{"id":"d","type":"subscribe","payload":{"query":"subscription($x: JSON) { jobStatusChanged { jobId } }","variables":{"x":${"[".repeat(d)}${"]".repeat(d)}}}}`);
    await property("ws", 7, fc.record({ init, msgs: fc.array(fc.oneof(msg.map((m) => JSON.stringify(m) ?? "null"), oddString, deep), { maxLength: 4 }), raw: fc.boolean() }), async ({ init: i, msgs, raw }) => {
      sent++;
      const outcome = await new Promise<{ code: number; errors: string[] }>((resolve) => {
        const ws = new WebSocket(wsUrl, "graphql-transport-ws");
        const errors: string[] = [];
        let code = 0;
        const timer = setTimeout(() => ws.terminate(), 1500);
        ws.on("open", () => {
          ws.send(raw ? String(JSON.stringify(i) ?? "") : JSON.stringify(i) ?? "null");
          for (const m of msgs) ws.send(m);
          setTimeout(() => ws.close(1000), 300);
        });
        ws.on("message", (data) => {
          const text = data.toString();
          if (/INTERNAL_SERVER_ERROR|\n\s+at /.test(text)) errors.push(text.slice(0, 400));
        });
        ws.on("error", () => {});
        ws.on("close", (c) => {
          code = c;
          clearTimeout(timer);
          resolve({ code, errors });
        });
      });
      if (outcome.code === 4500 || outcome.code === 1011) throw new Error(`graphql-ws closed with ${outcome.code} (internal error)`);
      if (outcome.errors.length > 0) throw new Error(`graphql-ws sent an internal error: ${outcome.errors[0]}`);
    });
  }, LIMIT);

  it("raw HTTP: bad Content-Length, broken chunking, huge headers, odd request lines", async () => {
    const port = app.api.port;
    const paths = ["/api/triggers/" + trg.id + "/webhook", "/api/v1/chat/completions", "/graphql", "/api/agent-run-jobs/job_x/status", "/readyz", "/"];
    const request = fc.oneof(
      fc.record({ kind: fc.constant("length"), path: fc.constantFrom(...paths), len: fc.oneof(fc.constantFrom("abc", "-1", "1, 2", "99999999999999999999", "0x10", " 5"), fc.nat({ max: 5000 }).map(String)), body: fc.string({ maxLength: 300 }) }),
      fc.record({ kind: fc.constant("chunked"), path: fc.constantFrom(...paths), chunks: fc.array(fc.oneof(fc.string({ maxLength: 50 }).map((s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`), fc.constantFrom("zz\r\nx\r\n", "5\r\nab\r\n", "-1\r\n\r\n", "ffffffffffffffff\r\nx\r\n", "3;ext=1\r\nabc\r\n")), { maxLength: 4 }), end: fc.boolean(), both: fc.boolean() }),
      fc.record({ kind: fc.constant("headers"), path: fc.constantFrom(...paths), size: fc.integer({ min: 1, max: 120_000 }), count: fc.integer({ min: 1, max: 3000 }) }),
      fc.record({ kind: fc.constant("line"), line: fc.oneof(fc.constantFrom("GET\r\n\r\n", "FOO / HTTP/1.1\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET /%%% HTTP/1.1\r\nHost: x\r\n\r\n", "\r\n\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "GET / HTTP/1.1\nHost: x\n\n", "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), fc.uint8Array({ maxLength: 300 })) }),
    );
    await property("raw", 8, request, async (r) => {
      sent++;
      let parts: (string | Uint8Array)[];
      if (r.kind === "length") {
        parts = [`POST ${r.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${admin}\r\nx-trigger-secret: ${trg.secret}\r\nContent-Length: ${r.len}\r\nConnection: close\r\n\r\n${r.body}`];
      } else if (r.kind === "chunked") {
        parts = [`POST ${r.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-trigger-secret: ${trg.secret}\r\nTransfer-Encoding: chunked\r\n${r.both ? "Content-Length: 3\r\n" : ""}Connection: close\r\n\r\n`, ...r.chunks, r.end ? "0\r\n\r\n" : ""];
      } else if (r.kind === "headers") {
        const many = Array.from({ length: Math.min(r.count, 3000) }, (_, i) => `X-H${i}: v\r\n`).join("");
        parts = [`GET ${r.path} HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(r.size)}\r\n${r.count > 1 ? many : ""}Connection: close\r\n\r\n`];
      } else {
        parts = [r.line];
      }
      const a = await rawExchange(port, parts, { waitMs: 400 });
      const path = r.kind === "line" ? "/" : r.path;
      if (a.status !== 0) check(path, a, `raw ${r.kind} ${path}`);
      // Refused by the HTTP parser itself: still the documented envelope, not a bare status line.
      if (a.status >= 400 && a.body.length === 0) throw new Error(`raw ${r.kind} ${path} → ${a.status} without an error body`);
    });
  }, LIMIT);

  it("slow senders (slowloris) do not stall others: partial requests held open while normal requests are served", async () => {
    const port = app.api.port;
    const slow = Array.from({ length: 40 }, (_, i) =>
      rawExchange(port, [`POST /api/triggers/${trg.id}/webhook HTTP/1.1\r\n`, "Host: x\r\n", "Content-Type: application/json\r\n", `X-Slow-${i}: `, "a", "b", "c"], { gapMs: 150, waitMs: 2500 }),
    );
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${app.url}/readyz`);
      expect(r.status).toBe(200);
      await r.text();
    }
    const answers = await Promise.all(slow);
    sent += slow.length + 20;
    for (const a of answers) if (a.status !== 0) check("/api/triggers/x/webhook", a, "slow sender");
  }, LIMIT);

  it("poison payloads pass through a real run to a terminal state", async () => {
    const poison = fc.oneof(
      fc.integer({ min: 1, max: 127 }).map((d) => "[".repeat(d) + "1" + "]".repeat(d)),
      fc.integer({ min: 1, max: 126 }).map((d) => '{"k":'.repeat(d) + '"\\ud83d\\ude00"' + "}".repeat(d)),
      fc.integer({ min: 1, max: 1_000_000 }).map((n) => JSON.stringify({ s: "x".repeat(n) })),
      fc.integer({ min: 1, max: 300_000 }).map((n) => JSON.stringify({ s: "🙂".repeat(n) })),
      fc.constantFrom('{"s":"\\ud800"}', '"\\udfff"', '{"\\ud800":1}', '{"s":"\\u0000"}', '"\u202e\u200b\ufeff"', '{"a":1e308,"b":-0,"c":123456789012345678901234567890}', "[]", "null", '""', "0"),
      fc.integer({ min: 1, max: 20_000 }).map((n) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])))),
      fc.string({ unit: "grapheme", maxLength: 2000 }).map((s) => JSON.stringify({ s, fail: s.length % 3 === 0 ? s : undefined })),
      jsonValue.map((v) => JSON.stringify({ v }) ?? "null"),
    );
    await property("poison", 9, poison, async (body) => {
      const res = await send(app.url, { path: `/api/triggers/${trg.id}/webhook`, method: "POST", headers: { "content-type": "application/json", "x-trigger-secret": trg.secret }, body });
      check("/api/triggers/x/webhook", res, "poison webhook");
      expect([202, 400, 413]).toContain(res.status);
      if (res.status === 202) poisoned.push(JSON.parse(res.body).job_id);
    });
    expect(poisoned.length).toBeGreaterThan(0);
    // Every accepted payload, poison or generated, reaches done or failed (with a message).
    const all = [...new Set([...poisoned, ...accepted])];
    const deadline = Date.now() + LIMIT / 2;
    let open_: { id: string; status: string }[] = [];
    do {
      const { rows } = await app.runtime.pool.query<{ id: string; status: string; error: string | null }>("select id, status, error from jobs where id = any($1::text[])", [all]);
      expect(rows).toHaveLength(all.length);
      open_ = rows.filter((r) => r.status !== "done" && r.status !== "failed");
      for (const r of rows) if (r.status === "failed") expect(r.error, r.id).toBeTruthy();
      if (open_.length > 0) await new Promise((r) => setTimeout(r, 500));
    } while (open_.length > 0 && Date.now() < deadline);
    expect(open_, `jobs not terminal: ${open_.slice(0, 5).map((j) => `${j.id}:${j.status}`).join(", ")}`).toEqual([]);
  }, LIMIT);

  it("afterwards: no escaped process error, /readyz is 200, and a normal webhook run completes", async () => {
    expect(escaped.map(String)).toEqual([]);
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    const r = await fetch(`${app.url}/api/triggers/${trg.id}/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-trigger-secret": trg.secret }, body: JSON.stringify({ normal: true }) });
    expect(r.status).toBe(202);
    const { job_id } = (await r.json()) as { job_id: string };
    for (let i = 0; i < 300; i++) {
      const s = (await (await fetch(`${app.url}/api/agent-run-jobs/${job_id}/status`, { headers: { "x-trigger-secret": trg.secret } })).json()) as { status: string };
      if (s.status === "done") return;
      expect(s.status).not.toBe("failed");
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error("the normal run did not finish");
  }, LIMIT);
});

// Keep the supported-model list in use so a renamed export fails the typecheck here too.
void SUPPORTED_MODELS;
