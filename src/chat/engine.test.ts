import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { AppError } from "../errors/app-error.js";
import { renewLease } from "../threads/store.js";
import { runChatTurn } from "./engine.js";

describe("runChatTurn (engine for non-HTTP callers, simulator upstream)", () => {
  let app: TestApp;
  let accountId: string;
  let agentId: string;
  beforeAll(async () => {
    app = await startTestApp();
    const acc = await createAccount(app.url, app.operatorToken, "engine", "1");
    accountId = acc.accountId;
    const r = await gql(app.url, acc.adminToken, `mutation { createAgent(input: { name: "e", instructions: "Be brief." }) { id } }`);
    agentId = r.data!.createAgent.id;
  });
  afterAll(async () => app?.close());

  it("answers, stores the thread, continues it and bills the account (ledger sum = balance)", async () => {
    const first = await runChatTurn(app.runtime, { accountId, agentId, messages: [{ role: "user", content: "hello" }], maxTokens: 100 });
    expect(first.threadId).toMatch(/^thr_/);
    expect(first.content).toContain("hello");
    expect(first.costMicros).toBeGreaterThan(0);
    const second = await runChatTurn(app.runtime, { accountId, agentId, threadId: first.threadId, messages: [{ role: "user", content: "again" }] });
    expect(second.threadId).toBe(first.threadId);
    const { rows } = await app.runtime.pool.query("select role, content, seq from messages where thread_id = $1 order by seq", [first.threadId]);
    expect(rows.map((r) => r.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(rows[2].content).toBe("again");
    const bal = await app.runtime.pool.query(
      "select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s from accounts where id = $1",
      [accountId],
    );
    expect(Number(bal.rows[0].b)).toBe(Number(bal.rows[0].s));
    expect(Number(bal.rows[0].b)).toBe(1_000_000 - first.costMicros - second.costMicros);
  });

  it("throws thread_not_found for an unknown thread and insufficient_balance at zero balance", async () => {
    await expect(runChatTurn(app.runtime, { accountId, agentId, threadId: "thr_nope", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({
      code: "thread_not_found",
    });
    await app.runtime.pool.query("insert into ledger_entries (account_id, amount_micros, kind, reference) select id, -balance_micros, 'charge', 'test' from accounts where id = $1", [accountId]);
    await app.runtime.pool.query("update accounts set balance_micros = 0 where id = $1", [accountId]);
    const err = await runChatTurn(app.runtime, { accountId, agentId, messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe("insufficient_balance");
  });
  it("renews a held lease (long streams keep their thread) and never re-takes a released one", async () => {
    const first = await runChatTurn(app.runtime, { accountId, agentId, messages: [{ role: "user", content: "lease" }], maxTokens: 5 }).catch(() => undefined);
    const { rows } = await app.runtime.pool.query("select id from threads where account_id = $1 order by created_at desc limit 1", [accountId]);
    const threadId = first?.threadId ?? rows[0].id;
    await renewLease(app.runtime.pool, threadId, "chatcmpl-gone", 60_000);
    const freed = await app.runtime.pool.query("select busy_until from threads where id = $1", [threadId]);
    expect(freed.rows[0].busy_until).toBeNull();
    await app.runtime.pool.query("update threads set busy_until = now() + interval '1 second', turn_id = 'chatcmpl-live' where id = $1", [threadId]);
    // Only the turn that holds the lease renews it.
    await renewLease(app.runtime.pool, threadId, "chatcmpl-other", 600_000);
    const notRenewed = await app.runtime.pool.query("select extract(epoch from busy_until - now()) as s from threads where id = $1", [threadId]);
    expect(Number(notRenewed.rows[0].s)).toBeLessThan(2);
    await renewLease(app.runtime.pool, threadId, "chatcmpl-live", 600_000);
    const held = await app.runtime.pool.query("select extract(epoch from busy_until - now()) as s from threads where id = $1", [threadId]);
    expect(Number(held.rows[0].s)).toBeGreaterThan(500);
  });
});
