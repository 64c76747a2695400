import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reclaimExpiredTurns } from "../threads/store.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { startUpstreamGate, type UpstreamGate } from "../../test/helpers/upstream-gate.js";
import { startCrashablePostgres, type CrashablePostgres } from "../../test/helpers/crashable-postgres.js";

/**
 * Group commit of the finish (threads/finish-batcher.ts, docs/design/billing-reservations.md): concurrent
 * turns of one account are finished by one statement. What must hold on that path: each turn is
 * decided alone inside the batch (a turn whose hold is gone fails with 503, its neighbours answer),
 * no overspend and the balance moves by exactly the answered charges under any mix, and across a
 * crash of PostgreSQL with batches in flight no answered turn loses its rows and no hold stays
 * charged once the reclaim ran. A PostgreSQL of its own (test/helpers/crashable-postgres.ts: WAL
 * writer slowed so unflushed commits are really lost; immediate shutdown).
 */
describe("chat turns of one account finished by one statement (group commit)", () => {
  let pgc: CrashablePostgres;
  let app: TestApp;
  let fake: FakeUpstream;
  let gate: UpstreamGate;
  const COST = 11; // micro-USD per answer at the fake's usage (11 prompt + 3 completion tokens)
  /** Turns per finish statement, in the order the statements were sent; and each statement's name. */
  const finishBatches: number[] = [];
  const finishNames: string[] = [];

  const admin = <T>(f: (c: pg.Client) => Promise<T>) => pgc.admin(f);
  const db = (sql: string, values: unknown[] = []) => pgc.query(sql, values);
  const newAccount = async (name: string, micros: number) => {
    const acct = await createAccount(app.url, app.operatorToken, name, (micros / 1e6).toFixed(6));
    const agent = (await gql(app.url, acct.adminToken, `mutation { createAgent(input: { name: "b", instructions: "Be brief." }) { id } }`)).data!.createAgent.id;
    const k = await gql(app.url, acct.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 1000000) { key } }`, { a: agent });
    return { accountId: acct.accountId, agentId: agent as string, key: k.data!.createApiKey.key as string };
  };
  const chat = async (key: string, body: { thread_id?: string; stream?: boolean; content?: string }) => {
    const { content, ...rest } = body;
    const r = await fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: content ?? "hi" }], max_tokens: 10, ...rest }),
    });
    const text = await r.text();
    if (rest.stream && r.status === 200) {
      const events = text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]").map((e) => JSON.parse(e.slice(6)));
      const error = events.find((e) => e.error)?.error;
      return { ok: text.trimEnd().endsWith("data: [DONE]") && !error, status: 200, code: error?.code as string | undefined, threadId: events.find((e) => e.thread_id)?.thread_id as string | undefined };
    }
    const json = JSON.parse(text);
    return { ok: r.status === 200, status: r.status, code: json.error?.code as string | undefined, threadId: json.thread_id as string | undefined };
  };
  /** An A2A v1.0 JSON-RPC call with a new one-text message: its result (each event's, for a stream), or its error. */
  const a2a = async (agentId: string, key: string, method: string, params: Record<string, unknown> = {}) => {
    const r = await fetch(`${app.url}/api/a2a/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] }, ...params } }),
    });
    const text = await r.text();
    const bodies = /event-stream/.test(r.headers.get("content-type") ?? "") ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))) : [JSON.parse(text)];
    const error = bodies.find((b) => b.error)?.error;
    if (error) return { error };
    return method === "SendStreamingMessage" ? bodies.map((b) => b.result) : bodies[0].result;
  };
  /** An A2A turn (blocking send, or stream) as `chat` reports a chat completion. */
  const a2aTurn = async (agentId: string, key: string, stream: boolean) => {
    const r = await a2a(agentId, key, stream ? "SendStreamingMessage" : "SendMessage");
    if ("error" in r) return { ok: false, code: (r.error.data?.[0]?.metadata?.code ?? r.error.message) as string, taskId: undefined };
    const state = stream ? r.at(-1).statusUpdate?.status.state : r.task.status.state;
    return { ok: state === "TASK_STATE_COMPLETED", code: state, taskId: (stream ? r[0].task.id : r.task.id) as string };
  };
  const untilArrived = async (n: number) => {
    while (gate.arrived < n) await new Promise((r) => setTimeout(r, 5));
  };
  const accountState = async (accountId: string) => {
    const [a] = await db(
      `select balance_micros::bigint as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s,
              (select count(*) from threads where account_id = $1 and (busy_until is not null or turn_id is not null))::int as busy,
              (select count(*) from ledger_entries r where r.account_id = $1 and r.kind = 'hold_release'
                  and not exists (select 1 from ledger_entries h where h.thread_id = r.thread_id and h.reference = r.reference and h.kind = 'hold'))::int as orphans,
              (select count(*) from (select reference from ledger_entries where account_id = $1 and kind in ('hold', 'hold_release') group by reference
                  having count(*) filter (where kind = 'hold') <> 1 or count(*) filter (where kind = 'hold_release') <> 1) x)::int as unsettled
         from accounts where id = $1`,
      [accountId],
    );
    return { balance: Number(a.b), ledger: Number(a.s), busy: a.busy as number, orphans: a.orphans as number, unsettled: a.unsettled as number };
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    // In front of the fake: after gate.hold(), answers are held until the test releases them, so
    // the held turns all get their answers, and finish, at the same moment.
    gate = await startUpstreamGate(fake.url, { holdAnswers: true });
    const upstream = gate.url;

    pgc = await startCrashablePostgres("chat-batch");
    app = await startTestApp({
      databaseUrl: pgc.url,
      // A short lease (one 3 s attempt + 10 s), so the crash test's dead turns are reclaimable within the test.
      env: { PROVIDER_A_BASE_URL: upstream, PROVIDER_A_API_KEY: "k", PROVIDER_B_BASE_URL: upstream, PROVIDER_B_API_KEY: "k", UPSTREAM_TIMEOUT_MS: "3000", UPSTREAM_MAX_RETRIES: "0" },
    });
    // Every finish statement the app sends, with how many turns it carries.
    const pool = app.runtime.pool;
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      const q = args[0] as { name?: string; values?: unknown[] } | undefined;
      if (typeof q === "object" && q?.name?.startsWith("thread-finish-turn")) {
        finishBatches.push(Array.isArray(q.values?.[0]) ? (q.values[0] as unknown[]).length : 1);
        finishNames.push(q.name);
      }
      return query(...args);
    }) as typeof pool.query;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await pgc?.stop();
    await gate?.close();
    await fake?.close();
  });

  it("finishes N concurrent turns of one account in fewer than N statements; a turn whose hold is gone fails alone with 503, its batch answers", async () => {
    const { accountId, key } = await newAccount("group", 1_000_000);
    const before: string[] = [];
    for (let i = 0; i < 4; i++) before.push((await chat(key, {})).threadId!);
    const N = 24;
    gate.hold();
    const turns = Array.from({ length: N }, (_, i) => (i < before.length ? chat(key, { thread_id: before[i], stream: i % 2 === 1 }) : chat(key, { stream: i % 3 === 0 })));
    await untilArrived(N);
    // One parked turn loses its hold as a database crash would lose it (hold row and debit gone together).
    const [lost] = await db(
      `with h as (delete from ledger_entries where id = (select l.id from ledger_entries l join threads t on t.id = l.thread_id and t.turn_id = l.reference
                   where l.account_id = $1 and l.kind = 'hold' order by l.id desc limit 1) returning thread_id, amount_micros)
       update accounts a set balance_micros = a.balance_micros - h.amount_micros from h where a.id = $1 returning h.thread_id`,
      [accountId],
    );
    const statementsBefore = finishBatches.length;
    gate.release();
    const results = await Promise.all(turns);
    const statements = finishBatches.length - statementsBefore;

    const failed = results.filter((r) => !r.ok);
    expect(failed.map((r) => r.code)).toEqual(["service_unavailable"]);
    expect(results.filter((r) => r.ok)).toHaveLength(N - 1);
    // The turns went together: far fewer statements than turns (the first alone, the rest batched).
    expect(statements).toBeLessThan(N / 2);
    const s = await accountState(accountId);
    expect(s).toMatchObject({ ledger: s.balance, busy: 0, orphans: 0, unsettled: 0 });
    expect(1_000_000 - s.balance).toBe((before.length + N - 1) * COST);
    // The lost turn's thread holds nothing of it; every other thread holds its turns.
    const expected = new Map<string, number>(results.filter((r) => r.ok).map((r) => [r.threadId!, before.includes(r.threadId!) ? 4 : 2]));
    expected.set(lost.thread_id, before.includes(lost.thread_id) ? 2 : 0);
    const stored = await db("select id, message_count from threads where id = any($1::text[])", [[...expected.keys()]]);
    expect(new Map(stored.map((t) => [t.id, t.message_count]))).toEqual(expected);
  }, 120_000);

  it("A2A turns join their account's batch, beside chat completions: every task ends in it with its turn, its push recorded, its follower NOTIFYed", async () => {
    const { accountId, agentId, key } = await newAccount("a2a-group", 1_000_000);
    const rpc = (method: string, params: Record<string, unknown>) => a2a(agentId, key, method, params);
    const listener = new pg.Client({ connectionString: pgc.url });
    await listener.connect();
    const heard: { taskId: string; state: string }[] = [];
    listener.on("notification", (n) => heard.push(JSON.parse(n.payload ?? "{}")));
    await listener.query("LISTEN a2a_task");
    try {
      gate.hold();
      // Each kind of A2A send, whose task the finish writes ended (blocking), ends a row written
      // at the open (returning at once; one with a push config) or alongside (a stream); and chat completions.
      const blocking = Array.from({ length: 4 }, () => rpc("SendMessage", {}));
      const streams = Array.from({ length: 4 }, () => rpc("SendStreamingMessage", {}));
      const completions = Array.from({ length: 4 }, (_, i) => chat(key, { stream: i % 2 === 1 }));
      const early = await Promise.all(
        Array.from({ length: 4 }, (_, i) => rpc("SendMessage", { configuration: { returnImmediately: true, ...(i === 0 ? { taskPushNotificationConfig: { url: "https://hooks.example.com/a2a" } } : {}) } })),
      );
      await untilArrived(16);
      const followed = early[1].task.id as string;
      await db("update a2a_tasks set followed = true where id = $1", [followed]);
      const statementsBefore = finishBatches.length;
      gate.release();
      const answered = { blocking: await Promise.all(blocking), streams: await Promise.all(streams), completions: await Promise.all(completions) };
      const tasks = await (async () => {
        for (;;) {
          const rows = await db("select id, state, answer from a2a_tasks where agent_id = $1 order by id", [agentId]);
          if (rows.length === 12 && rows.every((r) => r.state !== "working")) return rows;
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const batches = finishNames.slice(statementsBefore).map((name, i) => ({ name, turns: finishBatches[statementsBefore + i]! }));
      expect(batches.reduce((n, b) => n + b.turns, 0)).toBe(16);
      expect(batches.length).toBeLessThan(8);
      expect(batches.some((b) => b.name === "thread-finish-turns-a2a-tasks" && b.turns > 1)).toBe(true);

      expect(answered.blocking.map((r) => r.task.status.state)).toEqual(Array(4).fill("TASK_STATE_COMPLETED"));
      expect(answered.streams.map((events) => events.at(-1).statusUpdate.status.state)).toEqual(Array(4).fill("TASK_STATE_COMPLETED"));
      expect(answered.completions.every((r) => r.ok)).toBe(true);
      const ids = [...answered.blocking.map((r) => r.task.id), ...answered.streams.map((events) => events[0].task.id), ...early.map((r) => r.task.id)].sort();
      expect(tasks.map((t) => t.id)).toEqual(ids);
      expect(tasks.every((t) => t.state === "completed" && t.answer === "Hello from A")).toBe(true);
      // The push config's task: its completion recorded for delivery, once; the followed task's end NOTIFYed.
      const [config] = await db("select id from a2a_push_configs where task_id = $1", [early[0].task.id]);
      const pushes = await db("select event from deliveries where kind = 'a2a_push' and target = $1", [config.id]);
      expect(pushes.map((d) => d.event)).toContain("completed");
      for (let i = 0; i < 200 && !heard.some((h) => h.taskId === followed); i++) await new Promise((r) => setTimeout(r, 25));
      expect(heard.filter((h) => h.taskId === followed).map((h) => h.state)).toEqual(["completed"]);
      const s = await accountState(accountId);
      expect(s).toMatchObject({ ledger: s.balance, busy: 0, orphans: 0, unsettled: 0 });
      expect(1_000_000 - s.balance).toBe(16 * COST);
    } finally {
      gate.release();
      await listener.end();
    }
  }, 120_000);

  it("races: any mix of concurrent turns on one account whose balance covers only some never overspends, and the balance moves by exactly the answered charges", async () => {
    const [{ hold }] = await (async () => {
      const probe = await newAccount("probe", 1_000_000);
      await chat(probe.key, {});
      return db("select -amount_micros::bigint as hold from ledger_entries where account_id = $1 and kind = 'hold'", [probe.accountId]);
    })();
    const H = Number(hold);
    const batchedBefore = finishBatches.filter((n) => n > 1).length;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 }),
        // A turn on a thread, or a new one; some of the new ones through A2A (a task each, ended in the batch).
        fc.array(fc.record({ thread: fc.option(fc.nat(), { nil: undefined }), stream: fc.boolean(), a2a: fc.boolean() }), { minLength: 2, maxLength: 40 }),
        fc.integer({ min: 0, max: 30 }),
        fc.nat({ max: 1000 }),
        async (threads, mix, holdsWorth, extra) => {
          const initial = threads * COST + holdsWorth * H + extra;
          const { accountId, agentId, key } = await newAccount(`race-${run++}`, initial + threads * (H - COST));
          const existing: string[] = [];
          for (let i = 0; i < threads; i++) existing.push((await chat(key, {})).threadId!);
          const start = (await accountState(accountId)).balance;
          expect(start).toBe(initial + threads * (H - COST) - threads * COST);
          const results = await Promise.all(
            mix.map((m) =>
              m.a2a && m.thread === undefined
                ? a2aTurn(agentId, key, m.stream)
                : chat(key, { stream: m.stream, thread_id: m.thread !== undefined && existing.length ? existing[m.thread % existing.length] : undefined }),
            ),
          );
          for (const r of results) if (!r.ok) expect(["insufficient_balance", "thread_busy"]).toContain(r.code);
          const answered = results.filter((r) => r.ok).length;
          // An answered A2A turn's task completed with it; a refused one has none.
          const tasks = await db("select id, state from a2a_tasks where agent_id = $1 order by id", [agentId]);
          const a2aAnswered = results.flatMap((r) => ("taskId" in r && r.ok ? [r.taskId] : []));
          expect(tasks).toEqual(a2aAnswered.sort().map((id) => ({ id, state: "completed" })));
          const s = await accountState(accountId);
          expect(s.balance).toBeGreaterThanOrEqual(0);
          expect(s).toMatchObject({ ledger: s.balance, busy: 0, orphans: 0, unsettled: 0 });
          expect(start - s.balance).toBe(answered * COST);
          // Nothing stays held: what the balance shows is spendable at once.
          if (s.balance >= H) expect((await chat(key, {})).ok).toBe(true);
        },
      ),
      { numRuns: 12 },
    );
    // The property ran on the batched path.
    expect(finishBatches.filter((n) => n > 1).length).toBeGreaterThan(batchedBefore);
  }, 300_000);

  it("crash of PostgreSQL with batches in flight: no answered turn loses its rows, balance == ledger, no hold charged after the reclaim", async () => {
    const { accountId, key } = await newAccount("crash", 10_000_000);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const answered: { threadId: string; content: string }[] = [];
    let stop = false;
    const loop = async (i: number) => {
      let own: string | undefined;
      for (let k = 0; !stop; k++) {
        const content = `turn-${i}-${k}`;
        // A third of the loops continue their own thread; the rest open new ones.
        const r = await chat(key, { stream: i % 2 === 1, content, thread_id: i % 3 === 0 ? own : undefined }).catch(() => ({ ok: false, threadId: undefined }));
        if (r.ok) {
          answered.push({ threadId: r.threadId!, content });
          own = r.threadId;
        } else {
          own = undefined;
          await sleep(20);
        }
      }
    };
    const batchedBefore = finishBatches.filter((n) => n > 1).length;
    const loops = Array.from({ length: 32 }, (_, i) => loop(i));
    await sleep(1500);
    expect(finishBatches.filter((n) => n > 1).length).toBeGreaterThan(batchedBefore);
    const answeredBeforeCrash = answered.length;
    await pgc.crash(); // immediate shutdown: WAL buffers are not written; then a restart
    await sleep(1500);
    stop = true;
    await Promise.all(loops);
    expect(answeredBeforeCrash).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(answeredBeforeCrash);

    // Every answered turn's two messages are stored, in its thread, the answer right after the question.
    const stored = await db(
      `select u.thread_id, u.content from messages u join messages a on a.thread_id = u.thread_id and a.seq = u.seq + 1 and a.role = 'assistant'
        where u.role = 'user' and u.content = any($1::text[])`,
      [answered.map((a) => a.content)],
    );
    const found = new Set(stored.map((m) => `${m.thread_id}/${m.content}`));
    expect(answered.filter((a) => !found.has(`${a.threadId}/${a.content}`)).slice(0, 5)).toEqual([]);

    // Turns that died with the database (their finish never committed) are settled by the reclaim once their lease is over.
    for (let i = 0; ; i++) {
      await reclaimExpiredTurns(app.runtime.pool);
      const s = await accountState(accountId);
      if (s.busy === 0 || i > 60) break;
      await sleep(500);
    }
    const s = await accountState(accountId);
    expect(s.balance).toBeGreaterThanOrEqual(0);
    expect(s).toMatchObject({ ledger: s.balance, busy: 0, orphans: 0, unsettled: 0 });
    // Answered turns were charged; a turn may have committed and lost its answer with the connection, never the reverse.
    const [paid] = await db(
      `select count(*)::int as n from ledger_entries where account_id = $1 and kind = 'hold_release' and input_tokens + output_tokens > 0`,
      [accountId],
    );
    expect(paid.n).toBeGreaterThanOrEqual(answered.length);
    expect(10_000_000 - s.balance).toBe(paid.n * COST);
  }, 180_000);
});
