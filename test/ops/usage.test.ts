import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstreams.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { allPages, must, newAgent, newTrigger, postWebhook, waitForJob } from "../helpers/ops.js";

/**
 * usage(), Thread.cost and Job.cost against the ledger, to the micro-dollar, after a few hundred
 * mixed calls: chat (plain, streamed, continued threads, upstream failures, answers costing more
 * than their hold) on two keys, and webhook runs (a script with two model calls, a chat agent).
 */
const micros = (usd: string) => {
  const m = /^(-?)(\d+)\.(\d{6})$/.exec(usd)!;
  return (m[1] ? -1 : 1) * (Number(m[2]) * 1_000_000 + Number(m[3]));
};
const CALL_KINDS = new Set(["hold", "hold_release", "charge"]);
const MODELS = ["provider_a/model-2.5-flash", "provider_b/model-haiku-4-5-20251001", "provider_a/model-2.5-pro"];
const SCRIPT = `export default async function run(input, ctx) {
  const a = await ctx.chat({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: "first " + input.i }] });
  const b = await ctx.chat({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "second " + input.i }], maxTokens: input.i % 3 === 0 ? 1 : 50 });
  return { a: a.content, b: b.content };
}`;

interface Ledger {
  id: string;
  amount: string;
  kind: string;
  agentId: string | null;
  apiKeyId: string | null;
  threadId: string | null;
  triggerId: string | null;
  jobId: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  createdAt: string;
}

describe("usage and cost reconcile with the ledger", () => {
  let fake: FakeUpstream;
  let app: TestApp;
  let admin: string;
  let chatAgent: string;
  const keys: string[] = [];
  const jobIds: string[] = [];
  const threadIds = new Set<string>();
  const from = new Date(Date.now() - 3600_000).toISOString();

  const chat = async (key: string, body: Record<string, unknown>) => {
    const res = await fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const id = /"thread_id":"(thr_[^"]+)"/.exec(text)?.[1];
    if (id) threadIds.add(id);
    return { status: res.status, threadId: id };
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      worker: true,
      env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "a", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "b", UPSTREAM_MAX_RETRIES: "0", DEFAULT_RATE_LIMIT_PER_MINUTE: "100000" },
    });
    admin = (await createAccount(app.url, app.operatorToken, "acme", "100")).adminToken;
    chatAgent = await newAgent(app.url, admin, { name: "chat" });
    for (const n of ["one", "two"]) {
      keys.push((await must(app.url, admin, `mutation($a: ID!, $n: String!) { createApiKey(agentId: $a, name: $n) { key } }`, { a: chatAgent, n })).createApiKey.key);
    }
    const scripted = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "scripted", script: SCRIPT }));
    const plain = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "plain" }));

    const work: (() => Promise<void>)[] = [];
    for (let i = 0; i < 160; i++) {
      work.push(async () => {
        const key = keys[i % 2]!;
        const model = MODELS[i % 3]!;
        const content = i % 17 === 0 ? "#fail500 please" : `hello ${i}`;
        const first = await chat(key, { model, messages: [{ role: "user", content }], stream: i % 4 === 0, max_tokens: i % 5 === 0 ? 1 : 64 });
        if (i % 6 === 0 && first.threadId) await chat(key, { model, thread_id: first.threadId, messages: [{ role: "user", content: "and then?" }] });
      });
    }
    for (let i = 0; i < 70; i++) {
      work.push(async () => {
        const r = await postWebhook(app.url, i % 2 ? scripted : plain, { i });
        expect(r.status).toBe(202);
        jobIds.push(r.body.job_id);
      });
    }
    // Interleaved, 8 at a time.
    work.sort((a, b) => (work.indexOf(a) * 7919) % work.length - (work.indexOf(b) * 7919) % work.length);
    for (let i = 0; i < work.length; i += 8) await Promise.all(work.slice(i, i + 8).map((w) => w()));
    for (const id of jobIds) {
      const job = await waitForJob(app.url, admin, id, 120_000);
      if (job.threadId) threadIds.add(job.threadId);
    }
  }, 600_000);
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  const ledger = async () =>
    (
      await allPages<Ledger>(
        async (after) =>
          (
            await must(app.url, admin, `query($a: String) { ledger(first: 200, after: $a) { edges { node { id amount kind agentId apiKeyId threadId triggerId jobId model inputTokens outputTokens createdAt } } pageInfo { hasNextPage endCursor } } }`, { a: after })
          ).ledger,
      )
    ).nodes;
  const usage = async (groupBy: string[]) =>
    (
      await must(app.url, admin, `query($f: DateTimeISO!, $t: DateTimeISO!, $g: [UsageDimension!]!) { usage(from: $f, to: $t, groupBy: $g) { agentId apiKeyId threadId triggerId model day cost requests inputTokens outputTokens } }`, {
        f: from,
        t: new Date(Date.now() + 3600_000).toISOString(),
        g: groupBy,
      })
    ).usage as Record<string, any>[];

  it("the balance is the ledger's sum; usage() totals are the ledger's call rows", async () => {
    const rows = await ledger();
    const balance = micros((await must(app.url, admin, "{ me { balance } }")).me.balance);
    expect(rows.reduce((n, r) => n + micros(r.amount), 0)).toBe(balance);
    const calls = rows.filter((r) => CALL_KINDS.has(r.kind));
    const spent = -calls.reduce((n, r) => n + micros(r.amount), 0);
    expect(spent).toBeGreaterThan(0);
    const [total] = await usage([]);
    expect(micros(total!.cost)).toBe(spent);
    expect(micros(total!.cost)).toBe(100_000_000 - balance);
    expect(total!.requests).toBe(calls.filter((r) => r.kind === "hold").length);
    expect(total!.requests).toBeGreaterThan(250);
    expect(total!.inputTokens).toBe(calls.reduce((n, r) => n + r.inputTokens, 0));
    expect(total!.outputTokens).toBe(calls.reduce((n, r) => n + r.outputTokens, 0));
  });

  it("every grouping agrees with the ledger, group by group", async () => {
    const calls = (await ledger()).filter((r) => CALL_KINDS.has(r.kind));
    const dims: Record<string, (r: Ledger) => string | null> = {
      AGENT: (r) => r.agentId,
      API_KEY: (r) => r.apiKeyId,
      THREAD: (r) => r.threadId,
      TRIGGER: (r) => r.triggerId,
      MODEL: (r) => r.model,
      DAY: (r) => r.createdAt.slice(0, 10),
    };
    const field: Record<string, string> = { AGENT: "agentId", API_KEY: "apiKeyId", THREAD: "threadId", TRIGGER: "triggerId", MODEL: "model", DAY: "day" };
    for (const groupBy of [["AGENT"], ["API_KEY"], ["THREAD"], ["TRIGGER"], ["MODEL"], ["DAY"], ["AGENT", "MODEL", "DAY"], ["TRIGGER", "API_KEY"]]) {
      const expected = new Map<string, { cost: number; requests: number; input: number; output: number }>();
      for (const r of calls) {
        const k = groupBy.map((d) => dims[d]!(r) ?? "").join("|");
        const e = expected.get(k) ?? { cost: 0, requests: 0, input: 0, output: 0 };
        e.cost -= micros(r.amount);
        e.requests += r.kind === "hold" ? 1 : 0;
        e.input += r.inputTokens;
        e.output += r.outputTokens;
        expected.set(k, e);
      }
      const got = await usage(groupBy);
      expect(got.length, groupBy.join("+")).toBe(expected.size);
      for (const row of got) {
        const e = expected.get(groupBy.map((d) => row[field[d]!] ?? "").join("|"))!;
        expect({ cost: micros(row.cost), requests: row.requests, input: row.inputTokens, output: row.outputTokens }, groupBy.join("+")).toEqual(e);
      }
    }
    const byKey = await usage(["API_KEY", "AGENT"]);
    expect(byKey.filter((r) => r.apiKeyId).every((r) => r.agentId === chatAgent)).toBe(true);
  });

  it("Thread.cost and Job.cost are each the sum of their ledger rows; Job.audit.cost agrees", async () => {
    const calls = (await ledger()).filter((r) => CALL_KINDS.has(r.kind));
    const sumBy = (pick: (r: Ledger) => string | null, id: string) => -calls.filter((r) => pick(r) === id).reduce((n, r) => n + micros(r.amount), 0);
    expect(threadIds.size).toBeGreaterThan(150);
    for (const id of threadIds) {
      const t = (await must(app.url, admin, `query($id: ID!) { thread(id: $id) { cost } }`, { id })).thread;
      expect(micros(t.cost), id).toBe(sumBy((r) => r.threadId, id));
    }
    let jobsTotal = 0;
    for (const id of jobIds) {
      const j = (await must(app.url, admin, `query($id: ID!) { job(id: $id) { cost status error audit { cost toolsUsed { kind name status durationMs cost } } } }`, { id })).job;
      expect(j.status, j.error).toBe("DONE");
      // The tools-used contract: one model item per call, its cost summing to the job's.
      expect(j.audit.toolsUsed.every((t: { kind: string; status: string }) => t.kind === "model" && t.status === "ok")).toBe(true);
      expect(j.audit.toolsUsed.reduce((n: number, t: { cost: string }) => n + micros(t.cost), 0)).toBe(micros(j.cost));
      expect(micros(j.cost), id).toBe(sumBy((r) => r.jobId, id));
      expect(j.audit.cost).toBe(j.cost);
      jobsTotal += micros(j.cost);
    }
    const byTrigger = await usage(["TRIGGER"]);
    expect(byTrigger.filter((r) => r.triggerId).reduce((n, r) => n + micros(r.cost), 0)).toBe(jobsTotal);
  });

  it("bad ranges are BAD_USER_INPUT, never a 500", async () => {
    const q = `query($f: DateTimeISO!, $t: DateTimeISO!) { usage(from: $f, to: $t, groupBy: [DAY]) { cost } }`;
    const now = new Date().toISOString();
    expect((await gql(app.url, admin, q, { f: now, t: now })).errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const bad = await gql(app.url, admin, q, { f: "yesterday", t: now });
    expect(bad.status).toBeLessThan(500);
    expect(bad.errors?.length).toBeGreaterThan(0);
  });
  it("the hourly rollup holds the ledger's call rows exactly, hour by hour, after every real write path", async () => {
    // Holds, releases, batch finishes, extra charges, failed calls and runs all went through the trigger.
    const byHour = `select account_id, date_trunc('hour', created_at, 'UTC') as bucket, coalesce(agent_id, '') as agent_id, coalesce(model, '') as model,
                           -sum(amount_micros)::bigint as cost, count(*) filter (where kind = 'hold')::bigint as requests, sum(input_tokens)::bigint as i, sum(output_tokens)::bigint as o
                      from ledger_entries where kind in ('hold', 'hold_release', 'charge') group by 1, 2, 3, 4`;
    const { rows } = await app.runtime.pool.query(
      `select count(*)::int as n from (${byHour}) l full join usage_rollups r using (account_id, bucket, agent_id, model)
        where r.id is null or l.cost is null or (l.cost, l.requests, l.i, l.o) is distinct from (r.cost_micros, r.requests, r.input_tokens, r.output_tokens)`,
    );
    expect(rows[0].n).toBe(0);
    const { rows: count } = await app.runtime.pool.query("select count(*)::int as n from usage_rollups");
    expect(count[0].n).toBeGreaterThan(0);
  });
});
