import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { postAnswer, waitForStatus } from "../../test/helpers/ask.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, getJson, postWebhook, type CreatedTrigger } from "../../test/helpers/webhooks.js";

const ASK = `export default async function run(input, ctx) {
  return await ctx.ask({ prompt: "Which?", timeoutSeconds: input.timeout, schema: { type: "object", properties: { pick: { type: "integer", minimum: 1, maximum: 3 }, note: { type: "string", maxLength: 20 } }, required: ["pick"] } });
}`;

/** The answer URL's documented errors (docs/guides/scripts.md, docs/design/input-requests.md). */
const DOCUMENTED = new Set(["not_found", "input_request_not_found", "input_already_answered", "input_request_expired", "validation_failed", "invalid_json", "payload_too_large"]);

const deep = (n: number) => "[".repeat(n) + "]".repeat(n);

/**
 * Whatever reaches an answer channel — huge, deep, schema-breaking or unstorable values, forged,
 * cut or expired tokens — gets a documented 4xx (or the one 200 of a valid first answer), never a 5xx.
 */
describe("answer channels under fuzzed input", () => {
  let app: TestApp;
  let admin: string;
  let t: CreatedTrigger;
  const open: { jobId: string; url: string }[] = [];
  let expiredUrl: string;

  const start = async (timeout: number): Promise<string> => {
    const r = await postWebhook(app.url, t.id, JSON.stringify({ timeout }), { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    return r.body.job_id;
  };
  const urlOf = async (jobId: string) => (await getJson(`${app.url}/api/agent-run-jobs/${jobId}/status`, { "x-trigger-secret": t.secret })).body.input_request.answer_url as string;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "fuzz", "10"));
    t = await createTrigger(app.url, admin, await createAgent(app.url, admin, { name: "asker", script: ASK }));
    const short = await start(1);
    for (const jobId of [await start(3600), await start(3600)]) {
      await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"]);
      open.push({ jobId, url: await urlOf(jobId) });
    }
    await waitForStatus(app.url, admin, short, ["INPUT_REQUIRED"]);
    expiredUrl = await urlOf(short);
    await waitForStatus(app.url, admin, short, ["DONE", "FAILED"]);
  });
  afterAll(async () => {
    await app?.close();
  });

  const values = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.record({ pick: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)), note: fc.string({ maxLength: 40 }) }).map((v) => JSON.stringify(v)),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.constantFrom(deep(20_000), deep(40), `{"pick":1,"note":"\\u0000"}`, `{"pick":1,"note":"\\ud800"}`, `{"\\ud800":1,"pick":1}`, "x".repeat(70_000), JSON.stringify({ pick: 1, pad: "y".repeat(70_000) }), "", "null"),
  );
  const tokens = (real: string) =>
    fc.oneof(
      fc.constant(real),
      fc.string({ maxLength: 60 }),
      fc.nat({ max: 42 }).map((i) => real.slice(0, i) + (real[i] === "A" ? "B" : "A") + real.slice(i + 1)),
      fc.constant(real.slice(0, 20)),
    );

  it("the answer URL: 200 at most once per request, otherwise documented 4xx", async () => {
    const [{ url }] = open as [{ jobId: string; url: string }];
    const [base, token] = url.split("?token=") as [string, string];
    const expiredToken = expiredUrl.split("?token=")[1]!;
    let wins = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          tokens(token).map((tk) => `${base}?token=${encodeURIComponent(tk)}`),
          fc.constant(expiredUrl),
          fc.constant(`${expiredUrl.split("?")[0]}?token=${token}`),
          fc.string({ maxLength: 30 }).map((id) => `${app.url}/api/input-requests/${encodeURIComponent(id)}/answer?token=${expiredToken}`),
        ),
        values,
        async (target, body) => {
          const r = await postAnswer(target, body);
          expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
          if (r.status === 200) wins++;
          else expect(DOCUMENTED.has(r.body?.error?.code), JSON.stringify(r.body)).toBe(true);
          if (target === expiredUrl) expect([400, 404, 410, 413]).toContain(r.status);
        },
      ),
      { numRuns: 150 },
    );
    expect(wins).toBeLessThanOrEqual(1);
    expect((await postAnswer(expiredUrl, `{"pick":1}`)).status).toBe(410);
  });

  it("answerJobInput: invalid values are BAD_USER_INPUT, nothing is an internal error", async () => {
    const { jobId } = open[1]!;
    let wins = 0;
    await fc.assert(
      fc.asyncProperty(values, async (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        // The variables as raw JSON: a value nested too deep for this side's JSON.stringify is sent as is.
        const res = await fetch(`${app.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
          body: `{"query":"mutation($j: ID!, $v: JSON!) { answerJobInput(jobId: $j, value: $v) { id } }","variables":{"j":"${jobId}","v":${valid ? text : JSON.stringify(text)}}}`,
        });
        expect(res.status).toBeLessThan(500);
        const r = (await res.json()) as { data?: { answerJobInput?: unknown }; errors?: { extensions: { code: string } }[]; error?: { code: string } };
        // Refused before GraphQL (the endpoint's JSON depth limit): a documented 400.
        if (res.status === 400 && r.error) return void expect(r.error.code).toBe("invalid_json");
        if (r.data?.answerJobInput) return void wins++;
        expect(["BAD_USER_INPUT", "CONFLICT"], JSON.stringify(r.errors).slice(0, 300)).toContain(r.errors?.[0]?.extensions.code);
      }),
      { numRuns: 80 },
    );
    expect(wins).toBeLessThanOrEqual(1);
  });
});
