import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { startUpstreamGate, type UpstreamGate } from "../../test/helpers/upstream-gate.js";
import { startCrashablePostgres, type CrashablePostgres } from "../../test/helpers/crashable-postgres.js";

/**
 * The chat turn's hold commits asynchronously (docs/design/billing-reservations.md, option B): a crash of
 * PostgreSQL between a turn's hold and its finish may lose the hold (and the new thread). This
 * crashes a PostgreSQL of its own (immediate shutdown: no WAL flush, crash recovery on restart)
 * while turns wait on an upstream held open by the test, restarts it, lets the upstream answer,
 * and checks what clients and the ledger see. The WAL writer is slowed to its maximum period so
 * the holds placed last are still in PostgreSQL's WAL buffers at the crash, i.e. lost.
 */
describe("chat turns across a crash of PostgreSQL between hold and finish", () => {
  let pgc: CrashablePostgres;
  let app: TestApp;
  let fake: FakeUpstream;
  let gate: UpstreamGate;
  let key: string;
  let accountId: string;
  const BALANCE = 1_000_000;
  const COST = 11; // micro-USD per answer at the fake's usage (11 prompt + 3 completion tokens)

  const admin = <T>(f: (c: pg.Client) => Promise<T>) => pgc.admin(f);
  const db = (sql: string, values: unknown[] = []) => pgc.query(sql, values);
  const chat = async (body: { thread_id?: string; stream?: boolean }) => {
    const r = await fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "hi" }], max_tokens: 10, ...body }),
    });
    const text = await r.text();
    if (body.stream && r.status === 200) {
      const events = text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]").map((e) => JSON.parse(e.slice(6)));
      const error = events.find((e) => e.error)?.error;
      return { ok: text.trimEnd().endsWith("data: [DONE]") && !error, code: error?.code as string | undefined, threadId: events.find((e) => e.thread_id)?.thread_id as string | undefined };
    }
    const json = JSON.parse(text);
    return { ok: r.status === 200, status: r.status, code: json.error?.code as string | undefined, threadId: json.thread_id as string | undefined };
  };
  const untilArrived = async (n: number) => {
    while (gate.arrived < n) await new Promise((r) => setTimeout(r, 5));
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    // In front of the fake: after gate.hold(), a call waits until the test releases it.
    gate = await startUpstreamGate(fake.url);
    const upstream = gate.url;

    pgc = await startCrashablePostgres("chat-crash");
    app = await startTestApp({
      databaseUrl: pgc.url,
      env: { PROVIDER_A_BASE_URL: upstream, PROVIDER_A_API_KEY: "k", PROVIDER_B_BASE_URL: upstream, PROVIDER_B_API_KEY: "k" },
    });
    const acct = await createAccount(app.url, app.operatorToken, "crash", String(BALANCE / 1e6));
    accountId = acct.accountId;
    const agent = (await gql(app.url, acct.adminToken, `mutation { createAgent(input: { name: "c", instructions: "Be brief." }) { id } }`)).data!.createAgent.id;
    const k = await gql(app.url, acct.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000) { key } }`, { a: agent });
    key = k.data!.createApiKey.key;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await pgc?.stop();
    await gate?.close();
    await fake?.close();
  });

  it("gives no answer whose thread is lost, keeps balance == ledger, leaves no hold charged, and threads continue after the restart", async () => {
    // Six threads committed before anything happens (their turns finished synchronously).
    const before: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await chat({});
      expect(r.ok).toBe(true);
      before.push(r.threadId!);
    }

    gate.hold();
    // Batch 1: holds placed, then made durable by a checkpoint (as any later synchronous commit would).
    const batch1 = [chat({}), chat({ stream: true }), chat({}), chat({ thread_id: before[0] }), chat({ thread_id: before[1], stream: true }), chat({ thread_id: before[2] })];
    await untilArrived(6);
    await admin((c) => c.query("checkpoint"));
    // Batch 2: continuations first (their rate-limit count and lease commit synchronously, which
    // would flush any asynchronous hold before them), then new threads, then the crash at once.
    const batch2 = [chat({ thread_id: before[3] }), chat({ thread_id: before[4], stream: true }), chat({ thread_id: before[5] })];
    await untilArrived(9);
    batch2.push(chat({}), chat({ stream: true }), chat({}));
    await untilArrived(12);

    await pgc.crash(); // immediate shutdown: WAL buffers are not written; then a restart
    gate.release();

    const results = await Promise.all([...batch1, ...batch2]);
    const answered = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    // Every turn either answered or failed with service_unavailable (its hold did not survive).
    for (const r of refused) expect(r.code).toBe("service_unavailable");
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // Batch 1's holds were durable before the crash: those turns all answer.
    expect((await Promise.all(batch1)).every((r) => r.ok)).toBe(true);

    // No answer whose thread is missing: every answered turn's thread holds its messages.
    for (const r of answered) {
      const rows = await db("select message_count, busy_until from threads where id = $1", [r.threadId]);
      expect(rows).toHaveLength(1);
      expect(rows[0].busy_until).toBeNull();
      expect(rows[0].message_count).toBe(before.includes(r.threadId!) ? 4 : 2);
    }
    const [acct] = await db(
      `select balance_micros::bigint as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s,
              (select count(*) from threads where account_id = $1 and busy_until is not null)::int as busy
         from accounts where id = $1`,
      [accountId],
    );
    expect(Number(acct.b)).toBeGreaterThanOrEqual(0);
    expect(acct.s).toBe(acct.b);
    expect(acct.busy).toBe(0);
    // The account paid exactly the answered turns, nothing for the failed ones.
    expect(BALANCE - Number(acct.b)).toBe((before.length + answered.length) * COST);
    // Every hold surviving in the ledger is settled exactly once; no release without its hold.
    const calls = await db(
      `select reference, count(*) filter (where kind = 'hold')::int as holds, count(*) filter (where kind = 'hold_release')::int as releases
         from ledger_entries where account_id = $1 and kind in ('hold', 'hold_release') group by reference`,
      [accountId],
    );
    expect(calls.filter((c) => c.holds !== 1 || c.releases !== 1)).toEqual([]);
    expect(calls).toHaveLength(before.length + answered.length);

    // Threads continue after the restart: one answered in the crash window, one whose turn was lost.
    gate.release();
    const lostContinuation = before.slice(3).find((t) => !answered.some((r) => r.threadId === t));
    for (const threadId of [answered.find((r) => !before.includes(r.threadId!))!.threadId!, ...(lostContinuation ? [lostContinuation] : [])]) {
      const r = await chat({ thread_id: threadId });
      expect(r).toMatchObject({ ok: true, threadId });
    }
    expect((await chat({ stream: true })).ok).toBe(true);
  }, 120_000);

  it("under load, crashed at whatever point each turn is in: every answered turn's thread is stored, balance == ledger", async () => {
    gate.release();
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const answered: { threadId: string; afterRestart: boolean }[] = [];
    let stop = false;
    let restarted = false;
    const loop = async (i: number) => {
      while (!stop) {
        const r = await chat({ stream: i % 2 === 1 }).catch(() => ({ ok: false, threadId: undefined }));
        if (r.ok) answered.push({ threadId: r.threadId!, afterRestart: restarted });
        else await sleep(20);
      }
    };
    const loops = Array.from({ length: 16 }, (_, i) => loop(i));
    await sleep(1500);
    await pgc.crash(); // immediate shutdown: WAL buffers are not written; then a restart
    restarted = true;
    await sleep(1500);
    stop = true;
    await Promise.all(loops);

    expect(answered.filter((a) => !a.afterRestart).length).toBeGreaterThan(0);
    expect(answered.filter((a) => a.afterRestart).length).toBeGreaterThan(0);
    const stored = await db("select id, message_count from threads where id = any($1::text[])", [answered.map((a) => a.threadId)]);
    const count = new Map(stored.map((t) => [t.id, t.message_count]));
    expect(answered.filter((a) => count.get(a.threadId) !== 2).map((a) => ({ ...a, n: count.get(a.threadId) })).slice(0, 5)).toEqual([]);
    const [acct] = await db(
      `select balance_micros::bigint as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s,
              (select count(*) from ledger_entries r where r.account_id = $1 and r.kind = 'hold_release'
                  and not exists (select 1 from ledger_entries h where h.thread_id = r.thread_id and h.reference = r.reference and h.kind = 'hold'))::int as orphans
         from accounts where id = $1`,
      [accountId],
    );
    expect(Number(acct.b)).toBeGreaterThanOrEqual(0);
    expect(acct.s).toBe(acct.b);
    expect(acct.orphans).toBe(0);
  }, 120_000);
});
