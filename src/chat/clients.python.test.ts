import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * Real Python clients, unmodified, against the gateway (fake providers behind it): the `openai`
 * SDK (test/clients/openai_sdk.py) and the OpenAI Agents SDK (test/clients/agents_sdk.py), each
 * through both providers. The venv comes from `.ci/run` (pip install openai openai-agents); in CI
 * a missing interpreter fails, locally the tests are skipped.
 */
const python = process.env.OPENAI_PYTHON ?? resolve(".tools/py-venv/bin/python");
const available = existsSync(python);
const ci = process.env.CI === "true" || process.env.CI === "1";
const MODELS = ["provider_a/model-2.5-flash", "provider_b/model-sonnet-4-6"];

describe("real Python clients: openai SDK and Agents SDK", () => {
  if (!available && ci) {
    it("has the Python interpreter with openai and openai-agents installed", () => {
      throw new Error(`Python interpreter not found at ${python} (set OPENAI_PYTHON or let .ci/run create .tools/py-venv)`);
    });
    return;
  }
  let app: TestApp;
  let fake: FakeUpstream;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    if (!available) return;
    fake = await startFakeUpstream();
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    const acc = await createAccount(app.url, app.operatorToken, "py-clients", "10");
    accountId = acc.accountId;
    const agent = (await gql(app.url, acc.adminToken, `mutation { createAgent(input: { name: "py" }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, acc.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "py") { key } }`, { a: agent })).data!.createApiKey.key;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });
  const run = (script: string, model: string) =>
    new Promise<any>((ok, fail) =>
      execFile(
        python,
        [resolve("test/clients", script)],
        { env: { ...process.env, BASE_URL: `${app.url}/api/v1`, API_KEY: key, MODEL: model, OPENAI_AGENTS_DISABLE_TRACING: "1" }, timeout: 90_000 },
        (err, out, errOut) => (err ? fail(new Error(`${err.message}\n${errOut}`)) : ok(JSON.parse(out.trim().split("\n").at(-1)!))),
      ),
    );

  it.skipIf(!available)("docs/guides/chat.md's Responses example runs as pasted (with this gateway's URL and key)", async () => {
    const guide = readFileSync(resolve("docs/guides/chat.md"), "utf8");
    const section = guide.slice(guide.indexOf("## The Responses API"));
    const example = /```python\n([\s\S]*?)```/.exec(section)![1]!;
    expect(example).toContain("from openai import OpenAI");
    const dir = mkdtempSync(join(tmpdir(), "agw-responses-readme-"));
    try {
      const file = join(dir, "example.py");
      writeFileSync(file, example.replace("http://127.0.0.1:3000", app.url));
      const out = await new Promise<string>((ok, fail) => execFile(python, [file], { timeout: 60_000, env: { ...process.env, AGENT_KEY: key } }, (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(stdout))));
      expect(out.trim()).toBe("Hello from A");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const model of MODELS) {
    it.skipIf(!available)(`openai SDK: tools, stream, thread_id round, json_schema, image, responses (${model})`, async () => {
      const out = await run("openai_sdk.py", model);
      expect(out.calls).toEqual([
        ["get_weather", { city: "Paris" }],
        ["get_time", { zone: "Paris" }],
      ]);
      expect(out.finish).toBe("tool_calls");
      expect(out.continued).toContain("result 0");
      expect(out.continued).toContain("result 1");
      expect(out.same_thread).toBe(true);
      expect(out.stream_calls).toEqual(out.calls);
      expect(out.stream_finish).toBe("tool_calls");
      expect(out.parsed).toEqual({ city: "Paris", temp: 2 });
      expect(out.image).toContain("saw 1 image");
      expect(out.response_call).toBe("get_weather");
      expect(out.response_text).toContain("sunny");
      expect(out.response_thread).toBe(true);
      expect(out.stream_types[0]).toBe("response.created");
      expect(out.stream_types).toContain("response.output_text.delta");
      expect(out.stream_types.at(-1)).toBe("response.completed");
      expect(out.retrieved).toBe(out.stream_text);
    });

    it.skipIf(!available)(`Agents SDK: a function-tool agent loop to a final answer via chat completions and responses (${model})`, async () => {
      const out = await run("agents_sdk.py", model);
      for (const kind of ["chat", "responses", "chat_stream", "responses_stream"]) expect(out[kind], kind).toContain("sunny in Paris");
      expect(out.tool_calls).toEqual(["Paris", "Paris", "Paris", "Paris"]);
      const { rows } = await app.runtime.pool.query("select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s from accounts where id = $1", [accountId]);
      expect(Number(rows[0].b)).toBe(Number(rows[0].s));
    });
  }
});
