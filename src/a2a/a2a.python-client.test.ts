import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * The official Python A2A client (`a2a-sdk`, test/clients/a2a_sdk.py), unmodified, against a chat
 * agent and an automation agent, in v1.0 and v0.3. The venv comes from `.ci/run`; in CI a
 * missing interpreter fails, locally the tests are skipped.
 */
const python = process.env.OPENAI_PYTHON ?? resolve(".tools/py-venv/bin/python");
const available = existsSync(python);
const ci = process.env.CI === "true" || process.env.CI === "1";

describe("A2A through the Python a2a-sdk", () => {
  if (!available && ci) {
    it("has the Python interpreter with a2a-sdk installed", () => {
      throw new Error(`Python interpreter not found at ${python} (set OPENAI_PYTHON or let .ci/run create .tools/py-venv)`);
    });
    return;
  }
  let app: TestApp;
  let fake: FakeUpstream;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    if (!available) return;
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0", UPSTREAM_TIMEOUT_MS: "20000" } });
    const acc = await createAccount(app.url, app.operatorToken, "a2a-py", "10");
    const agent = async (input: Record<string, unknown>) => {
      const id = (await gql(app.url, acc.adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: input })).data!.createAgent.id as string;
      const key = (await gql(app.url, acc.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "py") { key } }`, { a: id })).data!.createApiKey.key as string;
      return { url: `${app.url}/api/a2a/${id}`, key };
    };
    const chat = await agent({ name: "py-chat" });
    const job = await agent({
      name: "py-job",
      script: `export default async function run(input, ctx) {
        for (let i = 0; i < (input.rounds ?? 1); i++) await ctx.chat({ messages: [{ role: "user", content: String(input.text ?? "go") }] });
        return { got: input };
      }`,
    });
    Object.assign(env, { CHAT_URL: chat.url, A2A_KEY_CHAT: chat.key, JOB_URL: job.url, A2A_KEY_JOB: job.key, ADMIN_TOKEN: acc.adminToken });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });
  const run = (version: string) =>
    new Promise<any>((ok, fail) =>
      execFile(python, [resolve("test/clients/a2a_sdk.py")], { env: { ...process.env, ...env, VERSION: version }, timeout: 90_000 }, (err, out, errOut) =>
        err ? fail(new Error(`${err.message}\n${errOut}`)) : ok(JSON.parse(out.trim().split("\n").at(-1)!)),
      ),
    );

  it.skipIf(!available)("docs/guides/a2a.md's example runs as pasted (with this agent's id and key)", async () => {
    const guide = readFileSync(resolve("docs/guides/a2a.md"), "utf8");
    const section = guide.slice(guide.indexOf("## Sending a message, with the official Python SDK"));
    const example = /```python\n([\s\S]*?)```/.exec(section)![1]!;
    expect(example).toContain("asyncio.run(main())");
    const dir = mkdtempSync(join(tmpdir(), "agw-a2a-readme-"));
    try {
      const file = join(dir, "example.py");
      writeFileSync(file, example.replace("http://127.0.0.1:3000", app.url));
      const agentEnv = { ...process.env, AGENT_ID: env.CHAT_URL!.split("/").at(-1)!, AGENT_KEY: env.A2A_KEY_CHAT! };
      const out = await new Promise<string>((ok, fail) => execFile(python, [file], { timeout: 60_000, env: agentEnv }, (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(stdout))));
      expect(out).toContain("Hello from A");
      expect(out).toContain("TASK_STATE_COMPLETED");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const version of ["1.0", "0.3"]) {
    it.skipIf(!available)(`chat and automation agents over A2A ${version}`, async () => {
      const out = await run(version);
      expect(out).toMatchObject({
        stream_first: "task",
        stream_last_state: "TASK_STATE_COMPLETED",
        stream_text: "Hello from A",
        context_is_thread: true,
        blocking_state: "TASK_STATE_COMPLETED",
        same_context: true,
        get_history: 1,
        get_text: "Hello from A",
        job_started: expect.stringMatching(/TASK_STATE_(SUBMITTED|WORKING)/),
        sub_first: "task",
        sub_last_state: "TASK_STATE_COMPLETED",
        job_result: { got: { text: "#slow", rounds: 4 } },
        same_job_for_same_message: true,
        canceled: "TASK_STATE_CANCELED",
      });
      expect(out.ended_task_refused).not.toBe(false);
      // The client spoke the version asked for (its v0.3 transport for the v0.3 card).
      expect(out.transport).toBe(version === "0.3" ? "CompatJsonRpcTransport" : "JsonRpcTransport");
      if (version === "1.0") expect(out.listed).toBe(true);
      // A wrong key: the client raises on the HTTP status. Its v1.0 transport prints the status
      // line, whose reason phrase says what is wrong; v0.3's prints "HTTP Error: 401" only, and
      // the reason is in the challenge of the response on the exception's cause.
      const expected = {
        foreign: /This API key belongs to another agent/,
        admin: /Admin tokens \(adm_\.\.\.\) are for \/graphql; this endpoint takes an agent key \(a2a_\.\.\.\)/,
        unknown: /Invalid API key: no agent key/,
      };
      for (const [name, reason] of Object.entries(expected)) {
        const refused = out.refused[name];
        if (version === "1.0") expect(refused.shown).toMatch(new RegExp(`^A2AClientError: HTTP Error 401: Client error '401 Unauthorized: ${reason.source}`));
        else expect(refused.shown).toBe("A2AClientError: HTTP Error: 401");
        expect(refused.challenge).toMatch(new RegExp(`^Bearer realm="a2a", resource_metadata="[^"]+", error="invalid_token", error_description="${reason.source}`));
      }
    });
  }
});
