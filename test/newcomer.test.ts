import { createServer, type Server } from "node:net";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive } from "../src/dev/processes.js";
import { freePort } from "../src/dev/free-port.js";
import { gql } from "./helpers/graphql.js";
import { adminRun, childPids, launch, waitDead, waitReady, type Launcher } from "./helpers/launcher.js";

/**
 * README.md and docs/getting-started.md as a newcomer follows them (issue 32): `npm start` with a DATA_DIR of their own, /readyz,
 * a second terminal's CLI call (first without that DATA_DIR, then with it), an agent, a deliberate
 * wrong key on chat, A2A and MCP, a webhook with a bad signature, Ctrl-C. Every message they meet
 * says what is wrong; a healthy run prints nothing at warn level and ends with one "stopped" line.
 */

/** Lines at warn level or worse: pino's JSON (40 warn, 50 error, 60 fatal) or the Temporal SDK's. */
const warnLines = (out: string) => out.split("\n").filter((l) => /"level":(40|50|60)\b|\[(WARN|ERROR)\]/.test(l));

describe("a newcomer following README.md and docs/getting-started.md", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-newcomer-"));
  const elsewhere = mkdtempSync(join(tmpdir(), "agw-newcomer-other-"));
  const running: Launcher[] = [];
  let blocker: Server | undefined;
  afterAll(async () => {
    blocker?.close();
    for (const l of running) if (l.child.exitCode === null) l.child.kill("SIGKILL");
    const pids = childPids(dataDir);
    for (const pid of [pids.postgres, pids.temporal]) if (pid && isAlive(pid)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("docs/getting-started.md quotes the messages a newcomer meets, as the server prints them", () => {
    const guide = readFileSync(new URL("../docs/getting-started.md", import.meta.url), "utf8").replace(/\s*\n\s*/g, " ");
    // The same strings this file's tests below see the launcher, the CLI and the API print.
    for (const said of [
      "port 3000 is in use: stop the other process or set PORT",
      "[agent-gateway] stopped (SIGINT)",
      "wrote to the database of npm start (pid …, DATA_DIR /path/to/repo/.data, API http://127.0.0.1:3000)",
      "npm run -s admin -- create-account --name acme --balance 10 --json",
      '{"data":{"me":{"id":"acc_…","name":"acme","balance":"10.000000"}}}',
    ])
      expect(guide).toContain(said);
  });

  it("a PORT in use is refused at once, before PostgreSQL or Temporal start", async () => {
    const port = await freePort();
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(port, "127.0.0.1", r));
    const l = await launch(dataDir, {}, { port });
    running.push(l);
    expect(await l.exited).toBe(1);
    expect(l.output()).toContain(`port ${port} is in use: stop the other process or set PORT`);
    expect(l.output()).not.toMatch(/starting embedded PostgreSQL|EADDRINUSE|\n\s+at /);
    expect(existsSync(join(dataDir, "postgres"))).toBe(false);
    await new Promise((r) => blocker!.close(r));
    blocker = undefined;
  });

  it("start, second-terminal CLI, wrong keys, a bad webhook signature, Ctrl-C: each message says what happened", async () => {
    // Terminal 1: DATA_DIR=… npm start (its own process group, as a terminal's job).
    const l = await launch(dataDir, {}, { group: true });
    running.push(l);
    await waitReady(l);
    const api = `http://127.0.0.1:${l.port}`;
    expect(warnLines(l.output())).toEqual([]);
    expect(l.output()).toContain(`DATA_DIR=${dataDir} npm run admin -- create-account`);

    // Terminal 2, forgetting DATA_DIR: refused, naming where it looked and how to point it elsewhere.
    const lost = await adminRun(["create-account", "--name", "acme", "--balance", "10", "--json"], { DATA_DIR: elsewhere });
    expect(lost.code).toBe(1);
    expect(lost.stdout).toBe("");
    expect(lost.stderr).toContain(`no running npm start (or npm run stack:prod) found in DATA_DIR ${elsewhere}`);
    expect(lost.stderr).toMatch(/DATA_DIR=\/path\/to\/its\/data npm run admin/);
    expect(existsSync(join(elsewhere, "postgres"))).toBe(false);
    // With the same DATA_DIR: the running server's database, and it says so.
    const made = await adminRun(["create-account", "--name", "acme", "--balance", "10", "--json"], { DATA_DIR: dataDir });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toMatch(new RegExp(`^wrote to the database of npm start \\(pid ${l.child.pid}, DATA_DIR ${dataDir}, API ${api}\\)$`, "m"));
    const { adminToken } = JSON.parse(made.stdout) as { adminToken: string };
    expect((await gql(api, adminToken, "{ me { name balance } }")).data).toEqual({ me: { name: "acme", balance: "10.000000" } });

    // Agents the docs' way: a chat agent, and an automation agent in one call with its script.
    const chatAgent = (await gql(api, adminToken, `mutation { createAgent(input: { name: "Support", instructions: "Be brief." }) { id } }`)).data!.createAgent.id as string;
    // Busy for a while when asked, so Ctrl-C can come while a run is in flight.
    const script = "export default async function run(input, ctx) { const t = Date.now(); while (input.busyMs && Date.now() - t < input.busyMs) {} return { echo: input }; }";
    const created = await gql(api, adminToken, `mutation($s: String!) { createAgent(input: { name: "Echo", script: $s }) { id kind } }`, { s: script });
    expect(created.data!.createAgent.kind).toBe("AUTOMATION");
    const jobAgent = created.data!.createAgent.id as string;
    const key = async (agentId: string) => (await gql(api, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agentId })).data!.createApiKey.key as string;
    const chatKey = await key(chatAgent);
    const jobKey = await key(jobAgent);
    const ok = await fetch(`${api}/api/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${chatKey}` }, body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "Hi" }] }) });
    expect(ok.status).toBe(200);

    // A deliberate wrong key. Chat with the admin token:
    const chat = await fetch(`${api}/api/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "Hi" }] }) });
    expect(chat.status).toBe(401);
    expect(((await chat.json()) as any).error.message).toBe("Admin tokens (adm_...) are for /graphql; this endpoint takes an agent key (a2a_...)");
    // A2A with the other agent's key:
    const a2a = await fetch(`${api}/api/a2a/${chatAgent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${jobKey}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", role: "user", messageId: "m1", parts: [{ kind: "text", text: "hi" }] } } }),
    });
    expect(a2a.status).toBe(401);
    expect(a2a.statusText).toMatch(/^Unauthorized: This API key belongs to another agent/);
    expect(((await a2a.json()) as any).error.message).toMatch(/^This API key belongs to another agent/);
    // MCP with a mistyped key:
    const mcp = await fetch(`${api}/api/mcp/${chatAgent}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${chatKey}x` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } } }),
    });
    expect(mcp.status).toBe(401);
    expect(((await mcp.json()) as any).error.message).toMatch(/^Invalid API key: no agent key/);

    // A webhook whose body was re-formatted after signing.
    const trigger = (await gql(api, adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret webhookUrl } }`, { a: jobAgent })).data!.createTrigger;
    const body = '{"n":21}';
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", trigger.secret).update(`${ts}.${body}`).digest("hex");
    const send = (payload: string) =>
      fetch(`${api}/api/triggers/${trigger.trigger.id}/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-service-timestamp": ts, "x-service-signature": `sha256=${sig}` }, body: payload });
    const bad = await send('{ "n": 21 }');
    expect(bad.status).toBe(401);
    const refused = ((await bad.json()) as any).error;
    expect(refused).toMatchObject({ code: "invalid_credentials", reason: "signature_mismatch" });
    expect(refused.message).toMatch(/^Signature mismatch: sign the exact bytes of the body you send/);
    expect(JSON.stringify(refused)).not.toContain(sig);
    expect((await send(body)).status).toBe(202);
    // A run in flight at Ctrl-C: PostgreSQL stops under it (the terminal's SIGINT reaches it too),
    // and its activity's failures while the worker drains are expected, not warnings.
    const busy = '{"busyMs":3000}';
    const busySig = createHmac("sha256", trigger.secret).update(`${ts}.${busy}`).digest("hex");
    const inFlight = await fetch(`${api}/api/triggers/${trigger.trigger.id}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-timestamp": ts, "x-service-signature": `sha256=${busySig}` },
      body: busy,
    });
    expect(inFlight.status).toBe(202);
    const runId = ((await inFlight.json()) as { job_id: string }).job_id;
    for (let i = 0; i < 100; i++) {
      const status = ((await gql(api, adminToken, `query($id: ID!) { job(id: $id) { status } }`, { id: runId })).data as any).job.status;
      if (status === "RUNNING") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(((await gql(api, adminToken, `query($id: ID!) { job(id: $id) { status } }`, { id: runId })).data as any).job.status).toBe("RUNNING");

    // Ctrl-C in terminal 1: SIGINT to the whole process group, PostgreSQL and Temporal included.
    const pids = childPids(dataDir);
    const before = l.output().length;
    process.kill(-l.child.pid!, "SIGINT");
    expect(await l.exited).toBe(0);
    expect(await waitDead(pids.postgres)).toBe(true);
    expect(await waitDead(pids.temporal)).toBe(true);
    const stopping = l.output().slice(before);
    expect(warnLines(l.output()), l.output()).toEqual([]);
    expect(stopping.match(/stopped/g)).toHaveLength(1);
    expect(stopping.trimEnd().split("\n").at(-1)).toBe("[agent-gateway] stopped (SIGINT)");
  }, 240_000);
});
