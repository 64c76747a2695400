import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { startUpstreamGate, type UpstreamGate } from "../../test/helpers/upstream-gate.js";
import { runEntry, until, type Proc } from "../../test/helpers/processes.js";
import { freePort } from "../dev/free-port.js";
import { reclaimExpiredTurns } from "../threads/store.js";

/**
 * Money on the exit paths of a chat turn that never reaches its normal finish
 * (docs/design/billing-reservations.md, "A hold whose settle never ran"): the agent deleted mid-turn, a
 * turn that outlived its lease racing the reclaim, and the API instance killed mid-turn. Each
 * checks the account's balance as the API reports it against the answered turns' charges.
 */
describe("chat turns that die or lose their thread between hold and finish", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let gate: UpstreamGate;
  let upstream: string;
  const COST = 11; // micro-USD per answer at the fake's usage (11 prompt + 3 completion tokens)

  const closeGate = () => gate.hold();
  const openGate = () => gate.release();

  /** An account with `usd`, an agent and a key on it. */
  async function tenant(name: string, usd = "1") {
    const acct = await createAccount(app.url, app.operatorToken, name, usd);
    const agentId = (await gql(app.url, acct.adminToken, `mutation { createAgent(input: { name: "a", instructions: "Be brief." }) { id } }`)).data!.createAgent.id as string;
    const k = await gql(app.url, acct.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000) { key } }`, { a: agentId });
    return { ...acct, agentId, key: k.data!.createApiKey.key as string };
  }
  /** The balance as the account's owner reads it (GraphQL `me`), in micro-USD. */
  async function balance(adminToken: string): Promise<number> {
    const r = await gql(app.url, adminToken, "{ me { balance } }");
    return Math.round(Number(r.data!.me.balance) * 1e6);
  }
  async function chat(baseUrl: string, key: string, body: { thread_id?: string; stream?: boolean } = {}) {
    const r = await fetch(`${baseUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "hi" }], max_tokens: 10, ...body }),
    });
    const text = await r.text();
    if (body.stream && r.status === 200) {
      const events = text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]").map((e) => JSON.parse(e.slice(6)));
      const error = events.find((e) => e.error)?.error;
      return { status: r.status, ok: text.trimEnd().endsWith("data: [DONE]") && !error, code: error?.code as string | undefined, threadId: events.find((e) => e.thread_id)?.thread_id as string | undefined };
    }
    const json = JSON.parse(text);
    return { status: r.status, ok: r.status === 200, code: json.error?.code as string | undefined, threadId: json.thread_id as string | undefined };
  }
  const untilArrived = (n: number) => until(() => gate.arrived >= n, `${n} calls at the upstream`);

  beforeAll(async () => {
    fake = await startFakeUpstream();
    // In front of the fake: after closeGate(), a call waits until openGate().
    gate = await startUpstreamGate(fake.url);
    upstream = gate.url;
    // The reclaim runs only when a test calls it (the kill -9 case starts an instance of its own).
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: upstream, PROVIDER_A_API_KEY: "k", HOLD_RECLAIM_INTERVAL_MS: "3600000" } });
  }, 120_000);
  afterAll(async () => {
    gate?.release();
    await app?.close();
    await gate?.close();
    await fake?.close();
  });

  it("agent deleted mid-turn: the client gets 404 not_found (stream: an in-band not_found), nothing is charged, the hold is handed back", async () => {
    const t = await tenant("deleted-agent");
    const start = await balance(t.adminToken);
    // A thread of this agent that answered before: its charge stays.
    const earlier = await chat(app.url, t.key);
    expect(earlier.ok).toBe(true);

    closeGate();
    const turns = [chat(app.url, t.key), chat(app.url, t.key, { stream: true }), chat(app.url, t.key, { thread_id: earlier.threadId })];
    await untilArrived(3);
    const del = await gql(app.url, t.adminToken, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: t.agentId });
    expect(del.errors).toBeUndefined();
    openGate();
    const [plain, stream, continued] = await Promise.all(turns);
    expect(plain).toMatchObject({ status: 404, code: "not_found" });
    expect(stream).toMatchObject({ ok: false, code: "not_found" });
    expect(continued).toMatchObject({ status: 404, code: "not_found" });
    // Only the turn answered before the deletion is paid.
    expect(await balance(t.adminToken)).toBe(start - COST);
    const { rows } = await app.runtime.pool.query("select count(*)::int as n from ledger_entries where account_id = $1 and kind = 'hold_release'", [t.accountId]);
    expect(rows[0].n).toBe(4);
  });

  it("turns past their lease racing the reclaim: each turn is either answered and paid or settled by the reclaim, never both; balance = answered charges", async () => {
    const t = await tenant("race", "10");
    const start = await balance(t.adminToken);
    let answered = 0;
    let refused = 0;
    for (let round = 0; round < 4; round++) {
      // Half continue threads answered before (their lease is taken by the turn), half open new ones.
      const base: string[] = [];
      for (let i = 0; i < 8; i++) base.push((await chat(app.url, t.key)).threadId!);
      answered += base.length;
      closeGate();
      const turns = Array.from({ length: 16 }, (_, i) => chat(app.url, t.key, { ...(i % 2 ? { stream: true } : {}), ...(i < 8 ? { thread_id: base[i] } : {}) }));
      await untilArrived(16);
      // As if every turn had been paused past its lease: each may now be reclaimed.
      await app.runtime.pool.query("update threads set busy_until = now() - interval '1 second' where account_id = $1 and turn_id is not null", [t.accountId]);
      openGate();
      const sweeps = Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 10; i++) await reclaimExpiredTurns(app.runtime.pool);
      });
      const results = await Promise.all(turns);
      await Promise.all(sweeps);
      for (const r of results) {
        if (r.ok) answered++;
        else {
          expect(r.code).toBe("service_unavailable");
          refused++;
        }
      }
    }
    // Every hold settled exactly once, by its finish or by the reclaim.
    const settles = await app.runtime.pool.query<{ n: number }>(
      `select count(*)::int as n from ledger_entries h where h.account_id = $1 and h.kind = 'hold'
          and (select count(*) from ledger_entries r where r.thread_id = h.thread_id and r.reference = h.reference and r.kind = 'hold_release') <> 1`,
      [t.accountId],
    );
    expect(settles.rows[0]!.n).toBe(0);
    expect(answered + refused).toBe(4 * 24);
    expect(await balance(t.adminToken)).toBe(start - answered * COST);
    const leased = await app.runtime.pool.query("select count(*)::int as n from threads where account_id = $1 and (turn_id is not null or busy_until is not null)", [t.accountId]);
    expect(leased.rows[0].n).toBe(0);
  }, 180_000);

  it("a late finish that read its hold as unsettled before the reclaim committed credits nothing: it waits on the thread row and re-reads it", async () => {
    const t = await tenant("late-finish");
    const start = await balance(t.adminToken);
    const base = (await chat(app.url, t.key)).threadId!;
    closeGate();
    const turns = [chat(app.url, t.key), chat(app.url, t.key, { thread_id: base }), chat(app.url, t.key, { stream: true }), chat(app.url, t.key)];
    await until(() => gate.arrived >= 4, "4 calls at the upstream", 20_000);
    await app.runtime.pool.query("update threads set busy_until = now() - interval '1 second' where account_id = $1 and turn_id is not null", [t.accountId]);
    // The order that loses money if a finish trusts its snapshot: the reclaim locks the four
    // threads and waits on the account row (held here); a finish starts (its snapshot sees the
    // hold unsettled) and waits on its thread row; then the reclaim commits, then it runs.
    const blocker = new pg.Client({ connectionString: app.databaseUrl });
    const sweeper = new pg.Pool({ connectionString: app.databaseUrl, max: 1 });
    await blocker.connect();
    try {
      const waiting = async () => (await blocker.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")).rows[0].n as number;
      await sweeper.query("select 1"); // its connection open before the lock is taken
      await blocker.query("begin");
      await blocker.query("select 1 from accounts where id = $1 for update", [t.accountId]);
      const sweep = reclaimExpiredTurns(sweeper);
      await until(async () => (await waiting()) >= 1, "the reclaim waiting on the account row", 20_000);
      openGate();
      // At least one finish has read its snapshot and waits on its thread row (the others follow).
      await until(async () => (await waiting()) >= 2, "a finish waiting on its thread row", 20_000);
      await blocker.query("commit");
      expect((await sweep).holds).toBe(4);
    } finally {
      await blocker.end();
      await sweeper.end();
    }
    for (const r of await Promise.all(turns)) expect(r).toMatchObject({ ok: false, code: "service_unavailable" });
    expect(await balance(t.adminToken)).toBe(start - COST);
    const settles = await app.runtime.pool.query<{ n: number }>(
      "select count(*)::int as n from ledger_entries where account_id = $1 and kind = 'hold_release'",
      [t.accountId],
    );
    expect(settles.rows[0]!.n).toBe(5);
  });

  it("kill -9 of an API instance mid-turn: once the turns' leases expire the periodic reclaim hands every hold back; balance = answered charges", async () => {
    const t = await tenant("crash");
    const start = await balance(t.adminToken);
    const port = await freePort();
    // A second API instance on the same database, with a 1 s upstream timeout and no retries: its
    // turns' leases end 11 s after they start.
    const api: Proc = runEntry("serve", {
      NODE_ENV: "test",
      DATABASE_URL: app.databaseUrl,
      TEMPORAL_ADDRESS: app.config.temporal.address!,
      TEMPORAL_TASK_QUEUE: app.config.temporal.taskQueue,
      OPERATOR_TOKEN: app.operatorToken,
      SECRET_ENCRYPTION_KEY: app.config.secretEncryptionKey.toString("base64"),
      PROVIDER_A_BASE_URL: upstream,
      PROVIDER_A_API_KEY: "k",
      UPSTREAM_TIMEOUT_MS: "1000",
      UPSTREAM_MAX_RETRIES: "0",
      LOG_LEVEL: "silent",
      HOST: "127.0.0.1",
      PORT: String(port),
    });
    const url = `http://127.0.0.1:${port}`;
    // The instance that survives, with its periodic reclaim every 300 ms.
    const survivor = await startTestApp({ databaseUrl: app.databaseUrl, operatorToken: app.operatorToken, env: { PROVIDER_A_BASE_URL: upstream, PROVIDER_A_API_KEY: "k", HOLD_RECLAIM_INTERVAL_MS: "300" } });
    try {
      await until(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, "the second API instance ready");
      const answeredBefore = await chat(url, t.key);
      expect(answeredBefore.ok).toBe(true);
      closeGate();
      // Their connections die with the instance: a rejected fetch or an error answer.
      const cut = [chat(url, t.key), chat(url, t.key, { stream: true }), chat(url, t.key, { thread_id: answeredBefore.threadId }), chat(url, t.key, { stream: true })].map((p) =>
        p.catch(() => ({ ok: false })),
      );
      await untilArrived(4);
      api.child.kill("SIGKILL");
      await api.exited;
      for (const r of await Promise.all(cut)) expect(r.ok).toBe(false);
      // The four holds are debited, then handed back by the reclaim of the instance that lives.
      expect(await balance(t.adminToken)).toBeLessThan(start - COST);
      await until(async () => (await balance(t.adminToken)) === start - COST, "the holds of the killed instance's turns handed back", 90_000);
      const threads = await app.runtime.pool.query("select count(*)::int as n from threads where account_id = $1 and turn_id is not null", [t.accountId]);
      expect(threads.rows[0].n).toBe(0);
      // The continued thread is free again.
      openGate();
      expect((await chat(app.url, t.key, { thread_id: answeredBefore.threadId })).ok).toBe(true);
      expect(await balance(t.adminToken)).toBe(start - 2 * COST);
    } finally {
      openGate();
      api.child.kill("SIGKILL");
      await survivor.close();
    }
  }, 180_000);
});
