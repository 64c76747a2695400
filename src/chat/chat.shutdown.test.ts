import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { balanceMicros, chargeOf, storedBalanceMicros, unreleasedHolds } from "../../test/helpers/balance.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { estimateTokens } from "../../src/providers/index.js";

/**
 * A graceful stop (a rolling deploy) costs customers nothing they were not answered (issue 17):
 * turns that finish within SHUTDOWN_DRAIN_MS are answered and billed; those still waiting on
 * their upstream then are cut: a non-stream chat or Responses turn answers 503 and releases its
 * hold, a stream that sent part of its answer is saved and billed for that part. The oracle is
 * the account's balance, read from its row after the API stopped.
 */
const B = "provider_b/model-haiku-4-5-20251001";
/** What the fake provider_b reports at message_start, before a #cut stream stalls. */
const FAKE_B_START = { input: 12, output: 1 };

describe("graceful stop with chat turns in flight", () => {
  let app: TestApp;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: { PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_TIMEOUT_MS: "120000", UPSTREAM_MAX_RETRIES: "0", SHUTDOWN_DRAIN_MS: "4000" },
    });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("answers what finishes within the drain, cuts and settles the rest: balance = initial − charges of what was answered", async () => {
    const { accountId, adminToken } = await createAccount(app.url, app.operatorToken, "deploy", "10");
    const agent = (await gql(app.url, adminToken, `mutation { createAgent(input: { name: "d" }) { id } }`)).data!.createAgent.id;
    const key = (await gql(app.url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
    const initial = await balanceMicros(app.url, adminToken);
    const post = (path: string, body: Record<string, unknown>) =>
      fetch(`${app.url}/api/v1/${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ model: B, ...body }) }).then(
        async (r) => ({ status: r.status, text: await r.text().catch((err: Error) => `(cut: ${err.message})`) }),
        (err: Error) => ({ status: 0, text: String(err) }),
      );
    const sent = fake.requests.length;
    const pending = {
      chatDone: post("chat/completions", { messages: [{ role: "user", content: "quick #slow" }] }),
      responseDone: post("responses", { input: "quick #slow" }),
      streamDone: post("chat/completions", { stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "stream #slow" }] }),
      chatCut: post("chat/completions", { messages: [{ role: "user", content: "wait #hang" }] }),
      responseCut: post("responses", { input: "wait #hang" }),
      streamCutEmpty: post("chat/completions", { stream: true, messages: [{ role: "user", content: "silent #hang" }] }),
      streamCut: post("chat/completions", { stream: true, messages: [{ role: "user", content: "partial #cut" }] }),
      responseStreamCut: post("responses", { stream: true, input: "partial #cut" }),
    };
    // Every turn holds its money and waits on the upstream; then the deploy stops this instance.
    for (let i = 0; fake.requests.length < sent + Object.keys(pending).length; i++) {
      if (i > 600) throw new Error("the turns never reached the upstream");
      await new Promise((r) => setTimeout(r, 50));
    }
    await app.api.close();
    const r = Object.fromEntries(await Promise.all(Object.entries(pending).map(async ([k, p]) => [k, await p] as const)));

    const events = (text: string) =>
      text
        .split("\n\n")
        .map((block) => block.split("\n").find((l) => l.startsWith("data: {")))
        .filter((l) => l !== undefined)
        .map((l) => JSON.parse(l.slice(6)));
    for (const k of ["chatDone", "responseDone", "streamDone"]) expect(r[k]!.status, `${k}: ${r[k]!.text}`).toBe(200);
    const cut = events(r.streamCut!.text);
    const partial = cut.map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
    const charges =
      chargeOf(app.config, B, JSON.parse(r.chatDone!.text).usage) +
      chargeOf(app.config, B, JSON.parse(r.responseDone!.text).usage) +
      chargeOf(app.config, B, events(r.streamDone!.text).at(-1).usage) +
      // The cut streams pay for what they sent: the provider's counts so far, the text it produced.
      2 * chargeOf(app.config, B, { prompt_tokens: FAKE_B_START.input, completion_tokens: Math.max(FAKE_B_START.output, estimateTokens(partial)) });
    expect(await storedBalanceMicros(app.runtime.pool, accountId)).toBe(initial - charges);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
    for (const k of ["chatCut", "responseCut", "streamCutEmpty"]) {
      expect(r[k]!.status, `${k}: ${r[k]!.text}`).toBe(503);
      expect(JSON.parse(r[k]!.text).error.code).toBe("service_unavailable");
    }
    expect(partial).toBe("Hello");
    expect(cut.at(-1).error.code).toBe("service_unavailable");
    const responseCut = events(r.responseStreamCut!.text);
    const responsePartial = responseCut.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(responsePartial).toBe("Hello");
    expect(responseCut.map((e) => e.type).slice(-2)).toEqual(["error", "response.failed"]);
    expect(responseCut.at(-2).code).toBe("service_unavailable");

    const { rows } = await app.runtime.pool.query("select content from messages where thread_id = $1 and role = 'assistant'", [cut[0].thread_id]);
    expect(rows.map((x) => x.content)).toEqual(["Hello"]);
  });
});
