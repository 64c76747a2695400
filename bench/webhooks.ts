import "reflect-metadata";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import { DefaultLogger, NativeConnection, Runtime, Worker } from "@temporalio/worker";
import { BENCHES, commandLine, firstLine, loadNow, main, pct, provenance, say, sleep, startProcess, writeSection, type Proc } from "./lib/harness.js";
import { startRunBackends } from "./lib/run-backends.js";
import { loadAutocannon } from "./lib/node-peers.js";
import { bareStarts, copyJobs, drain, kick, LANES, settled, STACK_TASK_QUEUE, startStack } from "./lib/dispatch.js";
import { makeTestCa } from "../test/helpers/tls.js";
import { startCallbackReceiver } from "../test/helpers/callback-receiver.js";
import { buildServer, commitOf, createTenant, graphql, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, GATEWAY_LOG_LEVEL, startDevLauncher, startServe, type RunningGateway } from "./lib/gateway.js";

/**
 * `npm run bench:webhooks`, against this gateway as deployed (`npm run serve` and `npm run
 * worker` from dist/, NODE_ENV=production, PostgreSQL with fsync on) and a Temporal dev server:
 * 1. dispatch, first, on a fresh server: a committed backlog drained by 1 and by 2 API instances
 *    (workflow starts/s from the jobs' dispatched_at stamps) vs a bare `client.workflow.start`
 *    loop run before and after them, same Temporal server, same number of starts, same
 *    concurrency (32, the dispatcher's);
 * 2. ingest per auth scheme (x-trigger-secret, HMAC with timestamp, Standard Webhooks) and body
 *    size (1 KB, 64 KB), the API's dispatcher starting workflows meanwhile (on a queue no worker polls);
 * 3. webhook → done vs the bare one-activity workflow, both timed from the client's send to the
 *    workflow's close time as Temporal records it (the same end point), one at a time, taking
 *    turns; the bare workflow also with eager workflow start (`requestEagerStart`); and job done →
 *    completion callback received (a trigger with a callbackUrl on a local HTTPS receiver); and
 *    answer → run resumed to done (a script that pauses on ctx.ask, answered by answerJobInput); and
 *    webhook → done through `npm start` (API and worker in one process) on the same PostgreSQL and
 *    Temporal, with eager workflow start (TEMPORAL_EAGER_START=auto) and without (off).
 * 4. dispatch on the production topology (`npm run stack:prod`, when the checkout has it): the
 *    same backlog drained by the stack's two API instances vs a bare loop against its Temporal,
 *    the stack's workers running the workflows of both.
 * Env: BENCH_DURATION s per ingest cell (10), BENCH_CONNECTIONS for ingest (10,50), BENCH_BACKLOG
 * starts per dispatch row (2000), BENCH_SAMPLES latency samples (50), BENCH_STACK=0, BENCH_WRITE=0, BENCH_SKIP_BUILD=1.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = String(process.env.BENCH_CONNECTIONS ?? "10,50").split(",").map(Number);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 2000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 50);
const PHASE_STACK = process.env.BENCH_STACK !== "0"; // BENCH_STACK=0 skips the production-topology rows
const SCRIPT = "export default async function run(input) { return { ok: true, n: input.n ?? null }; }";
/** Beside the trivial script: two journaled steps (two job_steps rows written per run). */
const STEPS_SCRIPT =
  "export default async function run(input, ctx) { const a = await ctx.step('a', async () => input.n ?? null); const b = await ctx.step('b', async () => [a]); return { ok: true, b }; }";
/** A run that pauses on a question (ctx.ask) and returns the answer once it comes. */
const ASK_SCRIPT = "export default async function run(input, ctx) { const a = await ctx.ask({ prompt: 'Go on with ' + input.n + '?' }); return { ok: true, a }; }";

type Scheme = "x-trigger-secret" | "HMAC + timestamp" | "Standard Webhooks";
const SCHEMES: Scheme[] = ["x-trigger-secret", "HMAC + timestamp", "Standard Webhooks"];
const SIZES = [1024, 65536];

/** A JSON body of exactly `size` bytes. */
function payload(size: number): string {
  const skeleton = JSON.stringify({ event: "order.created", order: { id: 12345, total: "19.99" }, pad: "" });
  return JSON.stringify({ event: "order.created", order: { id: 12345, total: "19.99" }, pad: "x".repeat(Math.max(0, size - skeleton.length)) });
}

/**
 * What a sender of `scheme` attaches to its `n`th request. Standard Webhooks gets a fresh message id
 * per request (it is the idempotency key). HMAC + timestamp signs each request's own body, made
 * unique by a sequence number in its padding: the gateway takes a repeated MAC for the same delivery
 * (one job), so one signature per row would measure deduplication, not ingest.
 */
function signer(scheme: Scheme, secret: string, body: string): () => { headers: Record<string, string>; body?: string } {
  if (scheme === "x-trigger-secret") return () => ({ headers: { "x-trigger-secret": secret } });
  const ts = String(Math.floor(Date.now() / 1000)); // within the 5-minute tolerance for the whole cell
  const run = randomBytes(4).toString("hex");
  let n = 0;
  if (scheme === "HMAC + timestamp") {
    return () => {
      const own = body.replace("x".repeat(16), `${run}${String(n++).padStart(8, "0")}`);
      const sig = createHmac("sha256", secret).update(`${ts}.`).update(own).digest("hex");
      return { headers: { "x-service-timestamp": ts, "x-service-signature": `sha256=${sig}` }, body: own };
    };
  }
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return () => {
    const id = `msg_${run}_${n++}`;
    return { headers: { "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": `v1,${createHmac("sha256", key).update(`${id}.${ts}.`).update(body).digest("base64")}` } };
  };
}

const autocannon = await loadAutocannon();

async function ingestCell(url: string, scheme: Scheme, secret: string, size: number, connections: number, duration: number, amount?: number) {
  const body = payload(size);
  const sign = signer(scheme, secret, body);
  return autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    connections,
    ...(amount ? { amount } : { duration }),
    requests: [
      {
        setupRequest: (req) => {
          const signed = sign();
          return { ...req, headers: { ...req.headers, "content-type": "application/json", ...signed.headers }, ...(signed.body ? { body: signed.body } : {}) };
        },
      },
    ],
  });
}

await main(async () => {
  const loadAtStart = loadNow();
  const root = resolve(process.env.BENCH_GATEWAY_ROOT ?? process.cwd()); // bench/compare.sh: a build of another commit
  const dir = mkdtempSync(join(tmpdir(), "agw-bench-wh-"));
  try {
    buildServer(root);
    say("starting PostgreSQL (durable settings) and a Temporal dev server");
    const { pgServer, temporal, databaseUrl, pool } = await startRunBackends(root, dir);
    const cleanups: (() => unknown)[] = []; // what is not a child process: run on the way out, also after a failure
    try {
      const count = async (where = "true") => (await pool.query<{ n: number }>(`select count(*)::int as n from jobs where ${where}`)).rows[0]!.n;
      const baseEnv = { DATABASE_URL: databaseUrl, PROVIDER_A_API_KEY: "sk-unused", PROVIDER_B_API_KEY: "sk-unused" };

      const api1 = await startServe("api (ingest)", root, { ...baseEnv, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: "bench-ingest" });
      const tenant = await createTenant(api1.url, { model: "provider_a/model-2.5-flash", script: SCRIPT });
      const created = await graphql(api1.url, tenant.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: tenant.agentId });
      const triggerId: string = created.createTrigger.trigger.id;
      const secret: string = created.createTrigger.secret;
      const hookUrl = (api: RunningGateway) => `${api.url}/api/triggers/${triggerId}/webhook`;

      // 1. Dispatch first, on a fresh Temporal server: the ingest phase leaves tens of thousands of
      // workflows whose tasks the server is still persisting for a while, which would slow
      // whichever row came right after it. A backlog of BACKLOG committed, undispatched jobs
      // (copies of one ingested job, made in SQL while no API runs), drained by 1 and by 2 freshly
      // started API instances; the bare loop runs before and after them, so both see the same server.
      const park = () => pool.query("update jobs set status = 'failed', error = 'bench: parked', dispatched_at = coalesce(dispatched_at, now()) where dispatched_at is null or status in ('queued', 'running')");
      await kick(api1.url, triggerId, secret);
      await sleep(500);
      await api1.proc.stop(); // its dispatcher would sweep the backlogs below
      await park();
      const sample = (await pool.query<{ id: string }>("select id from jobs order by created_at desc limit 1")).rows[0]!.id;
      const dispatchRows: string[] = [];
      const dispatchRates: number[] = [];
      const bareRuns: { seconds: number; rate: number }[] = [];
      const bareRow = async (when: string) => {
        await sleep(3000); // let the server finish persisting the previous row's tasks
        const b = await bareStarts(temporal.address, "default", BACKLOG, `bench-dispatch-bare-${bareRuns.length}`);
        bareRuns.push(b);
        say(`bare client.workflow.start loop (${when}): ${BACKLOG} in ${b.seconds.toFixed(1)} s: ${b.rate.toFixed(0)}/s`);
        dispatchRows.push(`| dev server | bare \`client.workflow.start\` loop, ${LANES} lanes (${when}) | ${BACKLOG} | ${b.seconds.toFixed(1)} | ${b.rate.toFixed(0)} |`);
      };
      await bareRow("before");
      for (const instances of [1, 2]) {
        const tag = `dev${instances}`;
        await copyJobs(pool, sample, tag, BACKLOG);
        await sleep(3000);
        // A task queue nobody polls: this measures starts, not runs.
        const env = { ...baseEnv, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: `bench-dispatch-${tag}` };
        const apis = await Promise.all(Array.from({ length: instances }, (_, i) => startServe(`api (dispatch ${i + 1}/${instances})`, root, env)));
        for (const a of apis) await kick(a.url, triggerId, secret);
        const d = await drain(pool, tag);
        for (const a of apis) await a.proc.stop();
        say(`dispatch, ${instances} API instance(s): ${d.n} started in ${d.seconds.toFixed(1)} s: ${d.rate.toFixed(0)}/s`);
        dispatchRows.push(`| dev server | agent-gateway dispatcher, ${instances > 1 ? `${instances} API instances sharing the backlog` : "1 API instance"} | ${d.n} | ${d.seconds.toFixed(1)} | ${d.rate.toFixed(0)} |`);
        dispatchRates.push(d.rate);
        await park();
      }
      await bareRow("after");
      // The reference: the better of the two bare runs (the stricter comparison).
      const bareRate = Math.max(...bareRuns.map((b) => b.rate));

      // 2. Ingest, with the API's dispatcher starting each job's workflow meanwhile (on a task
      // queue no worker polls: starts, not runs), as deployed.
      // Every cell gets a freshly started API, after the previous cell's backlog is parked and the
      // server has had a few seconds: otherwise each cell inherits the dispatcher work (and the
      // Temporal load) of the cells before it, and the schemes measured last look slowest.
      const ingestRows: string[] = [];
      for (const scheme of SCHEMES) {
        for (const size of SIZES) {
          for (const connections of CONNECTIONS) {
            await park();
            await sleep(3000);
            const apiIn = await startServe("api (ingest)", root, { ...baseEnv, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: "bench-ingest" });
            await ingestCell(hookUrl(apiIn), scheme, secret, size, connections, 2); // warm-up
            const before = await count();
            const startedBefore = await count("dispatched_at is not null");
            const r = await ingestCell(hookUrl(apiIn), scheme, secret, size, connections, DURATION);
            const committed = (await count()) - before;
            const started = (await count("dispatched_at is not null")) - startedBefore;
            await apiIn.proc.stop();
            const errors = r.non2xx + r.errors + r.timeouts;
            say(`ingest ${scheme} ${size / 1024} KB c=${connections}: ${r.requests.average.toFixed(0)}/s p50 ${r.latency.p50} p99 ${r.latency.p99} errors ${errors} committed ${committed} started ${started}`);
            ingestRows.push(
              `| ${scheme} | ${size / 1024} KB | ${connections} | ${r.requests.average.toFixed(0)} | ${((r.requests.average * size) / 1048576).toFixed(1)} | ${r.latency.p50} | ${r.latency.p99} | ${errors} | ${committed} / ${r.requests.total - errors} | ${(started / DURATION).toFixed(0)} |`,
            );
          }
        }
      }
      // Whatever the dispatcher had not started yet is parked, so the next phase starts clean.
      await park();

      const grpc = await Connection.connect({ address: temporal.address });
      const client = new Client({ connection: grpc });

      // 3. webhook → done vs the bare one-activity workflow, to the workflow's close time.
      const runQueue = "bench-run";
      const runEnv = { ...baseEnv, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: runQueue };
      const api3 = await startServe("api (runs)", root, runEnv);
      // Completion callbacks go to an HTTPS receiver on loopback: "hooks.test" = 127.0.0.1, exempt
      // from the egress rules (NODE_ENV=production refuses EGRESS_ALLOW_PRIVATE), its CA trusted.
      const hooksCa = makeTestCa(["hooks.test"], ["127.0.0.1"]);
      cleanups.push(() => hooksCa.cleanup());
      const hooks = await startCallbackReceiver("127.0.0.1", hooksCa);
      cleanups.push(() => hooks.close());
      const egressEnv = { EGRESS_ALLOW_ADDRESSES: "127.0.0.1", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.1" }), EGRESS_CA_FILE: hooksCa.caFile };
      const worker: Proc = startProcess("worker", process.execPath, ["--enable-source-maps", "dist/src/entry/worker.js"], {
        cwd: root,
        env: { NODE_ENV: "production", OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, PUBLIC_BASE_URL: api3.url.replace("http:", "https:"), LOG_LEVEL: GATEWAY_LOG_LEVEL, ...runEnv, ...egressEnv },
      });
      void worker;
      const closeTime = async (workflowId: string) => {
        for (;;) {
          try {
            const h = client.workflow.getHandle(workflowId);
            await h.result();
            const d = await h.describe();
            if (d.status.name !== "COMPLETED") throw new Error(`workflow ${workflowId} ended ${d.status.name}`);
            return d.closeTime!.getTime();
          } catch (err) {
            if (!(err instanceof WorkflowNotFoundError)) throw err;
            await sleep(2); // committed, not started yet: the dispatcher starts it right after the commit
          }
        }
      };
      const stepsAgent = await graphql(api3.url, tenant.adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: "bench-steps", script: STEPS_SCRIPT } });
      const stepsTrigger = await graphql(api3.url, tenant.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: stepsAgent.createAgent.id });
      const webhookOnce = async (n: number, steps = false) => {
        const body = JSON.stringify({ n });
        const t = Date.now();
        const url = steps ? `${api3.url}/api/triggers/${stepsTrigger.createTrigger.trigger.id}/webhook` : hookUrl(api3);
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-trigger-secret": steps ? stepsTrigger.createTrigger.secret : secret }, body });
        const { job_id } = (await res.json()) as { job_id: string };
        const closed = await closeTime(job_id);
        const { rows } = await pool.query<{ status: string }>("select status from jobs where id = $1", [job_id]);
        if (rows[0]?.status !== "done") throw new Error(`bench job ${job_id} ended ${rows[0]?.status}`);
        return closed - t;
      };
      // `npm start` (the development launcher: API and worker in one process) on the same
      // PostgreSQL server and Temporal, with a database of its own (its workers would otherwise also
      // take the callback deliveries of the rows above), each launcher on a task queue and DATA_DIR
      // of its own: one with eager workflow start (TEMPORAL_EAGER_START=auto, the default), one
      // without. Started one after the other (the first start builds the web console).
      await pgServer.createDatabase("dev");
      const devDatabaseUrl = pgServer.url("dev");
      const devEnv = (queue: string, eager: string) => ({ ...baseEnv, DATABASE_URL: devDatabaseUrl, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: queue, TEMPORAL_EAGER_START: eager });
      const devEager = await startDevLauncher("npm start (eager)", root, join(dir, "dev-eager"), devEnv("bench-dev-eager", "auto"));
      cleanups.push(() => devEager.proc.stop());
      const devOff = await startDevLauncher("npm start (eager off)", root, join(dir, "dev-off"), devEnv("bench-dev-off", "off"));
      cleanups.push(() => devOff.proc.stop());
      const devPool = new pg.Pool({ connectionString: devDatabaseUrl, max: 2 });
      cleanups.push(() => devPool.end());
      const devTenant = await createTenant(devEager.url, { model: "provider_a/model-2.5-flash", script: SCRIPT });
      const devTrigger = (await graphql(devEager.url, devTenant.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: devTenant.agentId })).createTrigger;
      let devEagerCount = 0;
      const devOnce = async (n: number, eager: boolean) => {
        const t = Date.now();
        const res = await fetch(`${(eager ? devEager : devOff).url}/api/triggers/${devTrigger.trigger.id}/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-trigger-secret": devTrigger.secret },
          body: JSON.stringify({ n }),
        });
        const { job_id } = (await res.json()) as { job_id: string };
        const closed = await closeTime(job_id);
        const { rows } = await devPool.query<{ status: string }>("select status from jobs where id = $1", [job_id]);
        if (rows[0]?.status !== "done") throw new Error(`bench job ${job_id} ended ${rows[0]?.status}`);
        // Temporal records on the run's first event whether eager execution was asked for and accepted.
        const history = await client.workflow.getHandle(job_id).fetchHistory();
        if (eager && history.events?.[0]?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted) devEagerCount++;
        return closed - t;
      };
      // Job done → callback received: from the job's terminal transition (finished_at, set in the
      // statement that records the callback) to the receiver's arrival stamp, same clock.
      const callbackTrigger = await graphql(api3.url, tenant.adminToken, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id } secret } }`, {
        a: tenant.agentId,
        u: `https://hooks.test:${hooks.port}/bench`,
      });
      const callbackOnce = async (n: number) => {
        const res = await fetch(`${api3.url}/api/triggers/${callbackTrigger.createTrigger.trigger.id}/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-trigger-secret": callbackTrigger.createTrigger.secret },
          body: JSON.stringify({ n }),
        });
        const { job_id } = (await res.json()) as { job_id: string };
        const deadline = Date.now() + 60_000;
        let arrival: number | undefined;
        while ((arrival = hooks.requests.find((c) => c.headers["webhook-id"] === `msg_${job_id}`)?.at) === undefined) {
          if (Date.now() > deadline) throw new Error(`no completion callback for ${job_id} within 60 s`);
          await sleep(2);
        }
        const { rows } = await pool.query<{ status: string; finished: Date }>("select status, finished_at as finished from jobs where id = $1", [job_id]);
        if (rows[0]?.status !== "done") throw new Error(`bench job ${job_id} ended ${rows[0]?.status}`);
        return arrival - rows[0].finished.getTime();
      };
      // Answer → run resumed: a run paused on ctx.ask (input_required, its slot free) is answered
      // through answerJobInput; from the answer's 200 to the workflow's close time (the job done).
      const askAgent = await graphql(api3.url, tenant.adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: "bench-ask", script: ASK_SCRIPT } });
      const askTrigger = (await graphql(api3.url, tenant.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: askAgent.createAgent.id })).createTrigger;
      const answerOnce = async (n: number) => {
        const res = await fetch(`${api3.url}/api/triggers/${askTrigger.trigger.id}/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-trigger-secret": askTrigger.secret },
          body: JSON.stringify({ n }),
        });
        const { job_id } = (await res.json()) as { job_id: string };
        const deadline = Date.now() + 60_000;
        while ((await pool.query<{ status: string }>("select status from jobs where id = $1", [job_id])).rows[0]?.status !== "input_required") {
          if (Date.now() > deadline) throw new Error(`bench job ${job_id} did not ask within 60 s`);
          await sleep(2);
        }
        await graphql(api3.url, tenant.adminToken, `mutation($j: ID!, $v: JSON!) { answerJobInput(jobId: $j, value: $v) { id } }`, { j: job_id, v: { go: true } });
        const answered = Date.now(); // graphql() returns once the 200's body is read
        const closed = await closeTime(job_id);
        const { rows } = await pool.query<{ status: string }>("select status from jobs where id = $1", [job_id]);
        if (rows[0]?.status !== "done") throw new Error(`bench job ${job_id} ended ${rows[0]?.status}`);
        return closed - answered;
      };
      Runtime.install({ logger: new DefaultLogger("WARN") });
      const native = await NativeConnection.connect({ address: temporal.address });
      const floorQueue = "bench-floor";
      const floorWorker = await Worker.create({
        connection: native,
        taskQueue: floorQueue,
        workflowsPath: fileURLToPath(new URL("./webhooks-workflows.ts", import.meta.url)),
        activities: { async noop() {} },
      });
      const floorRun = floorWorker.run();
      // On a failure below, the worker must stop too, or its pollers keep this process alive.
      cleanups.push(async () => {
        if (floorWorker.getState() === "RUNNING") floorWorker.shutdown();
        await floorRun.catch(() => {});
      });
      const eagerClient = new Client({ connection: native });
      // The default path's worker runs in a process of its own, as ours does (`npm run worker`);
      // eager start needs the client and the worker in one process, so its worker is the one above.
      const separateQueue = "bench-floor-separate";
      const { proc: floorProc } = await firstLine((onStdout) =>
        startProcess("floor worker", process.execPath, ["--import", "@swc-node/register/esm-register", fileURLToPath(new URL("./webhooks-floor-worker.ts", import.meta.url)), temporal.address, separateQueue], { onStdout }),
      );
      let eagerCount = 0;
      const bareOnce = async (eager: boolean) => {
        const c = eager ? eagerClient : client;
        const t = Date.now();
        const h = await c.workflow.start("benchNoop", { taskQueue: eager ? floorQueue : separateQueue, workflowId: `floor-${randomBytes(6).toString("hex")}`, ...(eager ? { requestEagerStart: true } : {}) });
        if ((h as { eagerlyStarted?: boolean }).eagerlyStarted) eagerCount++;
        await h.result();
        const d = await h.describe();
        return d.closeTime!.getTime() - t;
      };
      // The paths take turns, sample by sample, so a server still busy with the ingest phase's
      // workflows (or any other drift) weighs on each of them alike.
      for (let i = 0; i < 5; i++) {
        await webhookOnce(-1);
        await webhookOnce(-1, true);
        await bareOnce(false);
        await bareOnce(true);
        await callbackOnce(-1);
        await answerOnce(-1);
        await devOnce(-1, true);
        await devOnce(-1, false);
      }
      eagerCount = 0;
      devEagerCount = 0;
      const [webhookLat, stepsLat, floorLat, eagerLat, callbackLat, answerLat, devEagerLat, devOffLat]: number[][] = [[], [], [], [], [], [], [], []];
      for (let i = 0; i < SAMPLES; i++) {
        webhookLat.push(await webhookOnce(i));
        stepsLat.push(await webhookOnce(i, true));
        floorLat.push(await bareOnce(false));
        eagerLat.push(await bareOnce(true));
        callbackLat.push(await callbackOnce(i));
        answerLat.push(await answerOnce(i));
        devEagerLat.push(await devOnce(i, true));
        devOffLat.push(await devOnce(i, false));
      }
      await devEager.proc.stop();
      await devOff.proc.stop();

      floorWorker.shutdown();
      await floorRun;
      await floorProc.stop();
      await native.close();
      await grpc.close();
      await pool.end();

      // 4. Dispatch on the production topology, when this checkout has `npm run stack:prod`.
      let stackLines = ["Production topology (`npm run stack:prod`: two API instances behind HAProxy, Temporal server on PostgreSQL): not measured (this checkout has no `npm run stack:prod`)."];
      await api3.proc.stop();
      await worker.stop();
      const stack = PHASE_STACK ? await startStack(root, join(dir, "stack")) : undefined;
      if (stack) {
        try {
          const { topology } = stack;
          const apiUrl = topology.processes.find((p) => p.role === "api" && p.url)?.url ?? topology.apiUrl;
          const t = await createTenant(apiUrl, { model: "provider_a/model-2.5-flash", script: SCRIPT });
          const trig = await graphql(apiUrl, t.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: t.agentId });
          const job = await graphql(apiUrl, t.adminToken, `mutation($t: ID!) { sendTestWebhook(triggerId: $t, payload: { n: 1 }) { id } }`, { t: trig.createTrigger.trigger.id });
          // Like for like: the bare loop starts agentRun for copies of a real job (marked dispatched, so
          // no sweep takes them) on the stack's task queue, so its 2 workers run those workflows too,
          // just as they run the dispatcher's. Once they are done, the dispatcher drains its backlog.
          const stackPool = new pg.Pool({ connectionString: topology.databaseUrl, max: 2 });
          stackPool.on("error", () => {});
          await copyJobs(stackPool, job.sendTestWebhook.id, "sbare", BACKLOG, { dispatched: true });
          const ids = Array.from({ length: BACKLOG }, (_, i) => `job_bench_sbare_${i + 1}`);
          const b = await bareStarts(topology.temporalAddress, topology.temporalNamespace ?? "default", BACKLOG, STACK_TASK_QUEUE, ids);
          await settled(stackPool, "sbare");
          await copyJobs(stackPool, job.sendTestWebhook.id, "stack", BACKLOG);
          for (const p of topology.processes.filter((x) => x.role === "api" && x.url)) await kick(p.url!, trig.createTrigger.trigger.id, trig.createTrigger.secret);
          const d = await drain(stackPool, "stack");
          await stackPool.end();
          say(`stack:prod dispatch ${d.rate.toFixed(0)}/s, bare ${b.rate.toFixed(0)}/s`);
          dispatchRows.push(`| production topology | bare \`client.workflow.start\` loop, ${LANES} lanes (its 2 workers run the workflows meanwhile) | ${BACKLOG} | ${b.seconds.toFixed(1)} | ${b.rate.toFixed(0)} |`);
          dispatchRows.push(`| production topology | agent-gateway dispatcher, the stack's 2 API instances sharing the backlog (its 2 workers run the workflows meanwhile) | ${d.n} | ${d.seconds.toFixed(1)} | ${d.rate.toFixed(0)} |`);
          stackLines = [`Target ≥ 0.9× the bare loop, production topology: ${d.rate >= 0.9 * b.rate ? "**met**" : "**not met**"} (${(d.rate / b.rate).toFixed(2)}×).`];
        } finally {
          await stack.stop();
        }
      }

      const f = (x: number) => x.toFixed(0);
      const ratio = pct(webhookLat, 50) / pct(floorLat, 50);
      say(`webhook → done p50 ${f(pct(webhookLat, 50))} ms; bare p50 ${f(pct(floorLat, 50))} ms; eager bare p50 ${f(pct(eagerLat, 50))} ms (${eagerCount}/${SAMPLES} eager); job done → callback p50 ${f(pct(callbackLat, 50))} ms; answer → done p50 ${f(pct(answerLat, 50))} ms; npm start eager p50 ${f(pct(devEagerLat, 50))} ms (${devEagerCount}/${SAMPLES} eager), eager off p50 ${f(pct(devOffLat, 50))} ms`);
      const verdict = (ok: boolean) => (ok ? "**met**" : "**not met**");
      const body = [
        provenance(commandLine("bench:webhooks"), loadAtStart),
        "",
        `This gateway (${commitOf(root)}) as deployed: \`npm run serve\` / \`npm run worker\` from dist/ (NODE_ENV=production, LOG_LEVEL=${GATEWAY_LOG_LEVEL}),`,
        `PostgreSQL ${await pgServer.settings().catch(() => "(settings unavailable)")}, the Temporal dev server (\`temporal server start-dev\`, SQLite with WAL and`,
        "synchronous=OFF, as `npm start` runs it), autocannon as the sender; everything on the same 2 cores.",
        "",
        "### Ingest: `POST /api/triggers/<id>/webhook` per auth scheme and body size",
        "",
        `${DURATION} s per row after a 2 s warm-up, each row with a freshly started API and the previous row's backlog parked (so no row inherits`,
        "the dispatcher work of the rows before it). Each 202 follows the commit of the job + audit entry (+ idempotency record); concurrent requests share",
        "one group commit. Meanwhile the API's dispatcher starts each job's workflow (on a task queue no worker polls), as deployed: the last column is",
        "how many it started per second during the row (what it does not start in time stays queued in PostgreSQL and is swept later).",
        "HMAC + timestamp: `x-service-timestamp` + `x-service-signature: sha256=<hex HMAC of \"<ts>.<body>\">`, signed per request over a body of the same size made",
        "unique by a sequence number (a repeated MAC is the same delivery to the gateway: one job). Standard Webhooks: a new",
        "`webhook-id` per request (the gateway uses it as the idempotency key), signed per request by the load generator. \"committed / 2xx\": job rows",
        "created during the row against 202s received (never fewer; more by the requests still in flight when the row's time ran out).",
        "",
        "| scheme | body | connections | webhooks/s | MB/s | p50 ms | p99 ms | non-2xx + errors | committed / 2xx | workflows started/s meanwhile |",
        "|---|---|---|---|---|---|---|---|---|---|",
        ...ingestRows,
        "",
        "### Dispatch: workflow starts per second",
        "",
        `A backlog of ${BACKLOG} committed jobs (copies of an ingested job, made in SQL with no API running) drained by freshly started API instances; the rate is from the`,
        "jobs' own `dispatched_at` stamps (first to last); two instances share the backlog (a claim lease taken with SKIP LOCKED). The bare loop:",
        `\`client.workflow.start\` of the same workflow type, ${BACKLOG} ids, ${LANES} concurrent lanes (the dispatcher's concurrency), one client, same Temporal`,
        "server. Dev server: this phase runs first, on a fresh server (before the ingest phase, whose tens of thousands of workflows the server goes on",
        "persisting for a while), with the bare loop before and after the dispatcher rows; the targets use the better bare run. No worker polls these",
        "task queues: this is starts, not runs. Production topology: both start real runs of the stack's task queue, which its 2 workers execute",
        "meanwhile (the bare loop's workflows are started for copies of a real job, with the job id as workflow id, as the dispatcher starts them).",
        "",
        "| Temporal | path | workflows started | seconds | starts/s |",
        "|---|---|---|---|---|",
        ...dispatchRows,
        "",
        ...dispatchRates.map((r, i) => `Target ≥ 0.9× the bare loop, dev server, ${i + 1} instance${i ? "s" : ""}: ${verdict(r >= 0.9 * bareRate)} (${(r / bareRate).toFixed(2)}×).`),
        ...stackLines,
        "",
        "### Webhook → done vs the bare one-activity workflow (same end point)",
        "",
        `One at a time, ${SAMPLES} samples after 5 warm-ups, the eight paths taking turns sample by sample (so drift weighs on each alike). All are timed`,
        "from the client's send (Date.now()) to the workflow's close time as Temporal records it (`describe().closeTime`), so they end at the same point.",
        "Webhook → done: the POST (ingest commit), dispatch, the `agentRun` workflow (beginRun, the script in a fresh QuickJS instance, its output and",
        "status stored) in the worker process (`npm run worker`). Bare: `client.workflow.start` + completion of a workflow with one no-op activity,",
        "its worker in a process of its own (as ours). Eager: the same with `requestEagerStart`, its worker in the bench process (eager start needs the",
        "client to share the worker's NativeConnection, so client and worker in one process). Job done → callback received: a trigger with a",
        "`callbackUrl` on an HTTPS receiver on loopback (answering 200), from the job's `finished_at` (its terminal transition, which records the",
        "callback in the same statement) to the receiver's arrival stamp: the dispatcher's start of the `deliver` workflow, its two activities on the",
        "worker's outbound queue, the signed POST. Compare it with the bare workflow floor (a workflow start and one activity).",
        "Answer → run resumed: a script that pauses on `ctx.ask` (the job `input_required`, its run slot free) is answered through `answerJobInput`;",
        "timed from the mutation's 200 (the answer committed, the workflow signalled) to the workflow's close time: the job queued again, its run slot",
        "taken, the script re-run from its journal (the answer returned by `ctx.ask`) and its result stored.",
        "`npm start`: webhook → done through the development launcher (API and worker in one process, from the sources) on the same PostgreSQL and",
        "Temporal server, one launcher with `TEMPORAL_EAGER_START=auto` (the default: the dispatcher starts runs through the worker's connection with",
        "eager workflow start; the count is of runs whose history records `eagerExecutionAccepted`) and one with `off`, side by side.",
        "",
        "| path | p50 ms | p99 ms |",
        "|---|---|---|",
        `| webhook → done (trivial script) | ${f(pct(webhookLat, 50))} | ${f(pct(webhookLat, 99))} |`,
        `| webhook → done (script with two journaled ctx.step calls) | ${f(pct(stepsLat, 50))} | ${f(pct(stepsLat, 99))} |`,
        `| bare workflow, one no-op activity | ${f(pct(floorLat, 50))} | ${f(pct(floorLat, 99))} |`,
        `| bare workflow, eager start (${eagerCount} of ${SAMPLES} started eagerly) | ${f(pct(eagerLat, 50))} | ${f(pct(eagerLat, 99))} |`,
        `| job done → completion callback received | ${f(pct(callbackLat, 50))} | ${f(pct(callbackLat, 99))} |`,
        `| answer (answerJobInput's 200) → run resumed and done | ${f(pct(answerLat, 50))} | ${f(pct(answerLat, 99))} |`,
        `| webhook → done, \`npm start\`, eager workflow start (${devEagerCount} of ${SAMPLES} started eagerly) | ${f(pct(devEagerLat, 50))} | ${f(pct(devEagerLat, 99))} |`,
        `| webhook → done, \`npm start\`, TEMPORAL_EAGER_START=off | ${f(pct(devOffLat, 50))} | ${f(pct(devOffLat, 99))} |`,
        "",
        `Target webhook → done ≤ 1.1× the bare floor (p50): ${verdict(ratio <= 1.1)} (${ratio.toFixed(2)}×). Eager start ${pct(eagerLat, 50) < pct(floorLat, 50) ? "goes under" : "does not go under"} the default floor`,
        `(${f(pct(eagerLat, 50))} vs ${f(pct(floorLat, 50))} ms p50). \`npm start\` with eager start: ${(pct(devEagerLat, 50) / pct(devOffLat, 50)).toFixed(2)}× the same launcher without it`,
        `(${f(pct(devEagerLat, 50))} vs ${f(pct(devOffLat, 50))} ms p50), ${(pct(devEagerLat, 50) / pct(floorLat, 50)).toFixed(2)}× the bare floor, ${(pct(devEagerLat, 50) / pct(eagerLat, 50)).toFixed(2)}× the eager bare workflow.`,
      ].join("\n");
      writeSection(BENCHES.webhooks, body);
    } finally {
      for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
      await temporal.stop().catch(() => {});
      await pgServer.stop().catch(() => {});
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
