import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { balanceMicros, chargeOf, unreleasedHolds } from "../../test/helpers/balance.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { startUpstreamGate, type UpstreamGate } from "../../test/helpers/upstream-gate.js";
import { holdMicros, priceFor, promptParams } from "../billing/prices.js";
import { IMAGE_HOLD_TOKENS, imageCount, messageText, type ChatMessage } from "../providers/index.js";
import { finishTurn } from "../threads/finish.js";
import { runChatTurn } from "./engine.js";
import { openContinuation } from "./store.js";

/**
 * A thread continuation opens in one statement before its upstream call (chat/store.ts
 * `openContinuation`: rate-limit count + lease + history + hold), on two API instances of one
 * database: the statements it issues, one thread raced by many continuations, many threads racing
 * for a balance that covers only some, and the hold it sizes in SQL equal to the hold the engine
 * sizes in JS.
 */
describe("thread continuations: one open statement", () => {
  const MODEL = "provider_a/model-2.5-flash";
  let a: TestApp;
  let b: TestApp;
  let fake: FakeUpstream;
  let gate: UpstreamGate;
  // The hot-path statements (by name) each app issued, and how many there were when each upstream call arrived.
  const issued: string[] = [];
  const atArrival: number[] = [];

  const closeGate = () => gate.hold();
  const openGate = () => gate.release();
  const until = async (cond: () => boolean, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const post = async (app: TestApp, key: string, body: Record<string, unknown>) => {
    const r = await fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 10, ...(body.stream ? { stream_options: { include_usage: true } } : {}), ...body }),
    });
    const text = await r.text();
    if (body.stream && r.status === 200) {
      const events = text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]").map((e) => JSON.parse(e.slice(6)));
      const error = events.find((e) => e.error)?.error;
      return { status: error ? 500 : 200, code: error?.code as string | undefined, threadId: events.find((e) => e.thread_id)?.thread_id as string, usage: events.find((e) => e.usage)?.usage };
    }
    const json = JSON.parse(text);
    return { status: r.status, code: json.error?.code as string | undefined, threadId: json.thread_id as string, usage: json.usage, id: json.id as string | undefined };
  };
  const account = async (name: string, usd: string) => {
    const acct = await createAccount(a.url, a.operatorToken, name, usd);
    const agentId = (await gql(a.url, acct.adminToken, `mutation { createAgent(input: { name: "c", instructions: "Be brief." }) { id } }`)).data!.createAgent.id as string;
    const k = await gql(a.url, acct.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000) { key } }`, { a: agentId });
    return { ...acct, agentId, key: k.data!.createApiKey.key as string };
  };
  const ledger = async (accountId: string) => {
    const { rows } = await a.runtime.pool.query<{ b: string; s: string }>(
      "select balance_micros::text as b, (select coalesce(sum(amount_micros), 0) from ledger_entries where account_id = $1)::text as s from accounts where id = $1",
      [accountId],
    );
    return { balance: Number(rows[0]!.b), sum: Number(rows[0]!.s) };
  };
  const spend = async (accountId: string, keep: number) => {
    // Down to `keep`, through the ledger (balance == ledger stays true).
    await a.runtime.pool.query("insert into ledger_entries (account_id, amount_micros, kind, reference) select id, $2 - balance_micros, 'charge', 'test' from accounts where id = $1", [accountId, keep]);
    await a.runtime.pool.query("update accounts set balance_micros = $2 where id = $1", [accountId, keep]);
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    // In front of the fake: records when each call arrives; after closeGate(), holds it until openGate().
    gate = await startUpstreamGate(fake.url, { onArrival: () => atArrival.push(issued.length) });
    const upstream = gate.url;
    const env = { PROVIDER_A_BASE_URL: upstream, PROVIDER_A_API_KEY: "k", PROVIDER_B_BASE_URL: upstream, PROVIDER_B_API_KEY: "k" };
    a = await startTestApp({ env });
    b = await startTestApp({ env, databaseUrl: a.databaseUrl });
    for (const app of [a, b]) {
      const pool = app.runtime.pool;
      const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
      // Only the chat turn's named statements: not the periodic sweeps, nor the key lookups.
      pool.query = ((...args: unknown[]) => {
        const name = (args[0] as { name?: string } | undefined)?.name;
        if (name && /^(chat|thread|billing)-/.test(name) && !/sweep|reclaim-expired/.test(name)) issued.push(name);
        return query(...args);
      }) as typeof pool.query;
    }
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await gate?.close();
    await fake?.close();
  });

  it("issues one statement before the upstream call (chat API, stream, and a run's turn), and the finish after it", async () => {
    const acct = await account("count", "10");
    const first = await post(a, acct.key, {});
    expect(first.status).toBe(200);
    for (const [app, stream] of [[a, false], [b, true]] as const) {
      issued.length = 0;
      atArrival.length = 0;
      const r = await post(app, acct.key, { thread_id: first.threadId, stream });
      expect(r.status).toBe(200);
      expect(issued.slice(0, atArrival[0])).toEqual(["chat-open-continuation-rate-limited"]);
      expect(issued.slice(atArrival[0])).toContain("thread-finish-turn");
    }
    issued.length = 0;
    atArrival.length = 0;
    const run = await runChatTurn(a.runtime, { accountId: acct.accountId, agentId: acct.agentId, threadId: first.threadId, model: MODEL, messages: [{ role: "user", content: "again" }], maxTokens: 10 });
    expect(run.threadId).toBe(first.threadId);
    expect(issued.slice(0, atArrival[0])).toEqual(["chat-open-continuation"]);
  });

  it("tool results that answer no open call get 400 without holding money; valid ones open in one statement too", async () => {
    const acct = await account("tools", "10");
    const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
    const first = await post(a, acct.key, { messages: [{ role: "user", content: "weather in Paris?" }], tools: [weather] });
    expect(first.status).toBe(200);
    const call = (await a.runtime.pool.query("select data from messages where thread_id = $1 and role = 'assistant'", [first.threadId])).rows[0].data.toolCalls[0];
    const rows = async () => (await a.runtime.pool.query("select kind, amount_micros from ledger_entries where thread_id = $1", [first.threadId])).rows;
    const ledgerBefore = await rows();
    for (const messages of [[{ role: "tool", tool_call_id: "nope", content: "x" }], [{ role: "tool", tool_call_id: call.id, content: "x" }, { role: "tool", tool_call_id: `${call.id}x`, content: "x" }]]) {
      issued.length = 0;
      const bad = await post(b, acct.key, { thread_id: first.threadId, messages });
      expect(bad).toMatchObject({ status: 400, code: "invalid_request_error" });
      // No hold placed and handed back: the ledger has not moved, and the thread is free.
      expect(issued).toEqual(["chat-open-continuation-rate-limited", "thread-unlease"]);
      expect(await rows()).toEqual(ledgerBefore);
    }
    issued.length = 0;
    atArrival.length = 0;
    const answered = await post(b, acct.key, { thread_id: first.threadId, messages: [{ role: "tool", tool_call_id: call.id, content: "21 degrees" }] });
    expect(answered.status).toBe(200);
    expect(issued.slice(0, atArrival[0])).toEqual(["chat-open-continuation-rate-limited"]);
    expect(await unreleasedHolds(a.runtime.pool, acct.accountId)).toEqual([]);
  });

  it("many concurrent continuations of one thread on two instances: exactly one answers, the rest 409 thread_busy; the account pays that one", async () => {
    const acct = await account("busy", "10");
    const first = await post(a, acct.key, {});
    let answered = 1;
    let paid = chargeOf(a.config, MODEL, first.usage);
    for (let round = 0; round < 4; round++) {
      closeGate();
      const turns = Array.from({ length: 16 }, (_, i) => post(i % 2 ? b : a, acct.key, { thread_id: first.threadId, stream: round % 2 === 1, messages: [{ role: "user", content: `r${round} t${i}` }] }));
      const settled: Awaited<(typeof turns)[number]>[] = [];
      for (const t of turns) void t.then((r) => settled.push(r));
      // The winner waits at the gate holding the lease; every other turn must be refused meanwhile.
      await until(() => settled.length === 15 && gate.arrived === 1, "15 refusals and one parked winner");
      expect(settled.map((r) => `${r.status} ${r.code}`)).toEqual(Array(15).fill("409 thread_busy"));
      openGate();
      const results = await Promise.all(turns);
      const won = results.filter((r) => r.status === 200);
      expect(won).toHaveLength(1);
      answered++;
      paid += chargeOf(a.config, MODEL, won[0]!.usage);
    }
    expect(await balanceMicros(a.url, acct.adminToken)).toBe(10_000_000 - paid);
    expect(await unreleasedHolds(a.runtime.pool, acct.accountId)).toEqual([]);
    const { rows } = await a.runtime.pool.query("select message_count, busy_until, turn_id from threads where id = $1", [first.threadId]);
    expect(rows[0]).toEqual({ message_count: 2 * answered, busy_until: null, turn_id: null });
    const l = await ledger(acct.accountId);
    expect(l.sum).toBe(l.balance);
  });

  it("continuations racing finishes of the same thread, ungated, on two instances: no deadlock or 500, every answer paid once and stored", async () => {
    const acct = await account("race", "10");
    const threads = await Promise.all([0, 1].map(() => post(a, acct.key, {})));
    let paid = threads.reduce((s, t) => s + chargeOf(a.config, MODEL, t.usage), 0);
    const answered = new Map<string, number>(threads.map((t) => [t.threadId, 1]));
    const codes = new Set<string>();
    const stopAt = Date.now() + 3_000;
    const loop = async (i: number) => {
      while (Date.now() < stopAt) {
        const threadId = threads[i % 2]!.threadId;
        const r = await post(i % 3 ? a : b, acct.key, { thread_id: threadId, stream: i % 4 === 0, messages: [{ role: "user", content: `loop ${i}` }] });
        if (r.status === 200) {
          paid += chargeOf(a.config, MODEL, r.usage);
          answered.set(threadId, answered.get(threadId)! + 1);
        } else codes.add(`${r.status} ${r.code}`);
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, i) => loop(i)));
    // It raced: turns answered on both threads, and others found them busy.
    expect([...answered.values()].every((n) => n > 2)).toBe(true);
    expect(codes).toContain("409 thread_busy");
    expect([...codes].filter((c) => c !== "409 thread_busy")).toEqual([]);
    expect(await balanceMicros(a.url, acct.adminToken)).toBe(10_000_000 - paid);
    expect(await unreleasedHolds(a.runtime.pool, acct.accountId)).toEqual([]);
    for (const [threadId, n] of answered) {
      const { rows } = await a.runtime.pool.query("select message_count, (select count(*) from messages where thread_id = $1)::int as stored from threads where id = $1", [threadId]);
      expect(rows[0]).toEqual({ message_count: 2 * n, stored: 2 * n });
    }
  });

  it("continuations of distinct threads on an account whose balance covers only N holds: exactly N answer, the rest 402, no overspend", async () => {
    const acct = await account("scarce", "10");
    const M = 12;
    const N = 5;
    const threads = await Promise.all(Array.from({ length: M + 1 }, () => post(a, acct.key, {})));
    // The hold of one continuation (every thread has the same history and request): from the ledger.
    issued.length = 0;
    const probe = await post(a, acct.key, { thread_id: threads[M]!.threadId, messages: [{ role: "user", content: "same" }] });
    expect(probe.status).toBe(200);
    const { rows } = await a.runtime.pool.query<{ hold: string }>("select (-amount_micros)::text as hold from ledger_entries where thread_id = $1 and reference = $2 and kind = 'hold'", [threads[M]!.threadId, probe.id]);
    const hold = Number(rows[0]!.hold);
    await spend(acct.accountId, N * hold + hold - 1);
    const start = await balanceMicros(a.url, acct.adminToken);

    closeGate();
    const turns = threads.slice(0, M).map((t, i) => post(i % 2 ? b : a, acct.key, { thread_id: t.threadId, stream: i % 3 === 0, messages: [{ role: "user", content: "same" }] }));
    const settled: Awaited<(typeof turns)[number]>[] = [];
    for (const t of turns) void t.then((r) => settled.push(r));
    await until(() => settled.length === M - N && gate.arrived === N, `${M - N} refusals and ${N} held turns`);
    expect(settled.map((r) => `${r.status} ${r.code}`)).toEqual(Array(M - N).fill("402 insufficient_balance"));
    openGate();
    const results = await Promise.all(turns);
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(N);
    const paid = won.reduce((s, r) => s + chargeOf(a.config, MODEL, r.usage), 0);
    expect(await balanceMicros(a.url, acct.adminToken)).toBe(start - paid);
    expect(await unreleasedHolds(a.runtime.pool, acct.accountId)).toEqual([]);
    // The refused turns freed their threads: each continues now.
    const refused = threads.slice(0, M).filter((t) => !won.some((w) => w.threadId === t.threadId));
    await spend(acct.accountId, 1_000_000);
    for (const t of refused.slice(0, 2)) expect((await post(b, acct.key, { thread_id: t.threadId })).status).toBe(200);
  });

  it("a continuation whose lease waited for the previous turn's finish sends, and holds for, that turn's messages too", async () => {
    const acct = await account("snapshot", "10");
    const first = await post(a, acct.key, {});
    const pool = a.runtime.pool;
    // A finish of this thread in flight: its messages and count written, the row locked, not yet committed.
    const finishing = await pool.connect();
    let turn: ReturnType<typeof post> | undefined;
    try {
      await finishing.query("begin");
      await finishing.query("update threads set message_count = message_count + 2, updated_at = now() where id = $1", [first.threadId]);
      await finishing.query("insert into messages (thread_id, seq, role, content, created_at) values ($1, 3, 'user', 'saved-by-the-finish', now()), ($1, 4, 'assistant', 'noted', now())", [first.threadId]);
      const before = fake.requests.length;
      turn = post(b, acct.key, { thread_id: first.threadId, messages: [{ role: "user", content: "after the finish" }] });
      // Its statement has taken its snapshot and waits for the thread row.
      for (const deadline = Date.now() + 30_000; ; ) {
        const { rows } = await pool.query("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%lease as (update%'");
        if (rows.length) break;
        if (Date.now() > deadline) throw new Error("the continuation never waited on the thread row");
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(fake.requests.length).toBe(before);
      await finishing.query("commit");
    } finally {
      finishing.release();
    }
    const r = await turn;
    expect(r.status).toBe(200);
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("saved-by-the-finish");
    const { rows } = await pool.query<{ seq: number; content: string }>("select seq, content from messages where thread_id = $1 order by seq", [first.threadId]);
    expect(rows.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows[4]!.content).toBe("after the finish");
    // The hold covered the prompt as sent (six messages' worth of history), and was settled.
    const { rows: held } = await pool.query<{ hold: string }>("select (-amount_micros)::text as hold from ledger_entries where thread_id = $1 and kind = 'hold' order by created_at desc limit 1", [first.threadId]);
    const price = priceFor(a.config, MODEL);
    const sent: ChatMessage[] = [{ role: "system", content: "Be brief." }, ...rows.slice(0, 5).map((m, i) => ({ role: (i % 2 ? "assistant" : "user") as ChatMessage["role"], content: m.content }))];
    expect(Number(held[0]!.hold)).toBe(holdMicros(price, [...sent.map((m) => ({ content: m.content })), { content: "" }], 10));
    expect(await unreleasedHolds(pool, acct.accountId)).toEqual([]);
  });

  it("sizes the hold in SQL exactly as the engine sizes it in JS, on any stored history (texts, tool calls, images)", async () => {
    const acct = await account("sizes", "1000");
    const price = priceFor(a.config, MODEL);
    const { threadId } = await post(a, acct.key, {});
    // Any text PostgreSQL stores (no NUL), multi-byte included.
    const text = fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => s.replaceAll("\u0000", ""));
    const call = fc.record({ id: fc.string({ minLength: 1, maxLength: 8 }), name: text, arguments: text });
    const stored = fc.array(
      fc.oneof(
        fc.record({ role: fc.constantFrom("user", "system", "tool"), content: text }),
        fc.record({ role: fc.constant("assistant"), content: text, data: fc.option(fc.record({ toolCalls: fc.array(call, { minLength: 1, maxLength: 3 }) }), { nil: undefined }) }),
        fc.record({ role: fc.constant("user"), content: text, data: fc.record({ parts: fc.array(fc.oneof(fc.record({ type: fc.constant("image"), url: text }), fc.record({ type: fc.constant("text"), text })), { maxLength: 3 }) }) }),
      ),
      { maxLength: 6 },
    );
    let turn = 0;
    await fc.assert(
      fc.asyncProperty(stored, fc.array(text, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 100_000 }), async (history, request, maxTokens) => {
        await a.runtime.pool.query("delete from messages where thread_id = $1", [threadId]);
        for (const [seq, m] of history.entries()) {
          await a.runtime.pool.query("insert into messages (thread_id, seq, role, content, data, created_at) values ($1, $2, $3, $4, $5, now())", [threadId, seq + 1, m.role, m.content, "data" in m && m.data ? JSON.stringify(m.data) : null]);
        }
        await a.runtime.pool.query("update threads set message_count = $2 where id = $1", [threadId, history.length]);
        const system: ChatMessage[] = [{ role: "system", content: "Be brief." }];
        const messages: ChatMessage[] = request.map((content) => ({ role: "user", content }));
        const texts = (ms: ChatMessage[]) => [...ms.map((m) => ({ content: messageText(m) })), { content: "" }];
        const turnId = `chatcmpl-size${turn++}`;
        const tags = { agentId: acct.agentId, keyId: null, threadId, triggerId: null, jobId: null, model: MODEL };
        const req = [...system, ...messages];
        const o = await openContinuation(a.runtime.pool, {
          threadId, accountId: acct.accountId, agentId: acct.agentId, leaseMs: 60_000, turnId, tags,
          prompt: promptParams(price, texts(req), maxTokens, imageCount(req) * IMAGE_HOLD_TOKENS), imageHoldTokens: IMAGE_HOLD_TOKENS, toolResultIds: [],
        });
        expect(o.ok).toBe(true);
        await finishTurn(a.runtime.pool, { threadId, accountId: acct.accountId, baseSeq: o.messageCount, messages: [], release: o.hold, reference: turnId, tags, inputTokens: 0, outputTokens: 0 });
        const all = [...system, ...o.history, ...messages];
        // The history comes back as stored (one json value in the statement's row: multi-byte text, tool calls, parts).
        expect(o.history).toEqual(history.map((m) => ({ role: m.role, content: m.content, ...("data" in m ? m.data : undefined) })));
        expect(o.hold).toBe(holdMicros(price, texts(all), maxTokens, imageCount(all) * IMAGE_HOLD_TOKENS));
      }),
      { numRuns: 40 },
    );
    const l = await ledger(acct.accountId);
    expect(l.sum).toBe(l.balance);
  });
});
