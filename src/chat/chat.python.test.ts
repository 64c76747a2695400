import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * The official Python `openai` package against the running server (child process). The venv is
 * made by `.ci/run` (or by hand: python3 -m venv .tools/py-venv && .tools/py-venv/bin/pip install openai).
 * In CI a missing interpreter fails the test; locally the test is skipped.
 */
const python = process.env.OPENAI_PYTHON ?? resolve(".tools/py-venv/bin/python");
const available = existsSync(python);
const ci = process.env.CI === "true" || process.env.CI === "1";

const SCRIPT = `
import json, os, sys
from openai import OpenAI
client = OpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["API_KEY"], max_retries=0)
out = {}
r = client.chat.completions.create(model="provider_a/model-2.5-flash", messages=[{"role": "user", "content": "hello from python"}])
out["content"] = r.choices[0].message.content
out["thread_id"] = r.model_extra["thread_id"]
parts, tids = [], set()
for chunk in client.chat.completions.create(model="provider_b/model-sonnet-4-6", messages=[{"role": "user", "content": "stream"}], stream=True):
    tids.add(chunk.model_extra.get("thread_id"))
    if chunk.choices and chunk.choices[0].delta.content:
        parts.append(chunk.choices[0].delta.content)
out["streamed"] = "".join(parts)
out["stream_thread_ids"] = len(tids)
r2 = client.chat.completions.create(model="provider_a/model-2.5-flash", messages=[{"role": "user", "content": "again"}], extra_body={"thread_id": out["thread_id"]})
out["continued_thread_id"] = r2.model_extra["thread_id"]
print(json.dumps(out))
`;

describe("chat facade via the OpenAI Python SDK", () => {
  if (!available && ci) {
    it("has the Python interpreter with openai installed", () => {
      throw new Error(`Python interpreter not found at ${python} (set OPENAI_PYTHON or let .ci/run create .tools/py-venv)`);
    });
    return;
  }
  let app: TestApp;
  let key: string;
  let admin: string;
  beforeAll(async () => {
    if (!available) return;
    app = await startTestApp(); // no provider credentials: the built-in simulator answers
    const acc = await createAccount(app.url, app.operatorToken, "py", "5");
    admin = acc.adminToken;
    const agent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "py" }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "py") { key } }`, { a: agent })).data!.createApiKey.key;
  });
  afterAll(async () => app?.close());

  it.skipIf(!available)("creates, streams and continues a thread with extra_body", async () => {
    const stdout = await new Promise<string>((ok, fail) =>
      execFile(python, ["-c", SCRIPT], { env: { ...process.env, BASE_URL: `${app.url}/api/v1`, API_KEY: key }, timeout: 30_000 }, (err, out, errOut) =>
        err ? fail(new Error(`${err.message}\n${errOut}`)) : ok(out),
      ),
    );
    const out = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(out.content).toContain("hello from python");
    expect(out.thread_id).toMatch(/^thr_/);
    expect(out.streamed).toContain("stream");
    expect(out.stream_thread_ids).toBe(1);
    expect(out.continued_thread_id).toBe(out.thread_id);
    const t = await gql(app.url, admin, `query($id: ID!) { thread(id: $id) { messages { edges { node { role content } } } } }`, { id: out.thread_id });
    const messages = t.data!.thread.messages.edges.map((e: any) => e.node);
    expect(messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(messages[2].content).toBe("again");
  });
});
