import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabaseClient } from "../../test/helpers/db.js";
import { A2aTask } from "../db/schema.js";
import { sqlNames } from "../db/names.js";

/**
 * A chat task's end, when its record was written before it (a non-blocking send, a stream whose id
 * left early: a2a/store.ts), changes the state, answer, error, updated_at and followed columns only. While no index takes any of them,
 * PostgreSQL can make that update HOT: no new entry in any of the table's indexes, on the hot
 * path of every A2A turn.
 */
describe("a2a_tasks indexes", () => {
  const T = sqlNames(A2aTask);
  const ended = [T.state, T.answer, T.error, T.updatedAt, "followed"];
  const db = useTestDatabaseClient(beforeAll, afterAll);

  it("no index takes a column the end of a task changes", async () => {
    const { rows } = await db().query<{ index: string; column: string }>(
      `select i.relname as index, a.attname as column from pg_index x join pg_class i on i.oid = x.indexrelid
         join pg_attribute a on a.attrelid = x.indrelid and a.attnum = any(x.indkey) where x.indrelid = $1::regclass`,
      [T.table],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => ended.includes(r.column))).toEqual([]);
  });

  it("so the ends of many tasks are HOT updates: no index entry written", async () => {
    await db().query(`insert into accounts (id, name) values ('acc_hot', 'hot')`);
    await db().query(`insert into agents (id, account_id, name, default_model, updated_at) values ('agt_hot', 'acc_hot', 'hot', 'm', now())`);
    const N = 50;
    await db().query(
      `insert into ${T.table} (${T.id}, ${T.account}, ${T.agent}, ${T.contextId}, ${T.kind}, ${T.state}, ${T.request})
       select 'tsk_' || i, 'acc_hot', 'agt_hot', 'thr_' || i, 'chat', 'working', '{}'::jsonb from generate_series(1, $1) i`,
      [N],
    );
    // As the finish writes it (a2a/store.ts taskEndCtes): one statement a task.
    for (let i = 1; i <= N; i++) {
      await db().query(`update ${T.table} set ${T.state} = 'completed', ${T.answer} = 'done', ${T.error} = null, ${T.updatedAt} = now() where ${T.id} = $1 and ${T.state} = 'working'`, [`tsk_${i}`]);
    }
    await db().query("select pg_stat_force_next_flush()");
    await db().query("select 1");
    const { rows } = await db().query<{ upd: string; hot: string }>(`select pg_stat_clear_snapshot(), n_tup_upd as upd, n_tup_hot_upd as hot from pg_stat_user_tables where relid = $1::regclass`, [T.table]);
    expect(Number(rows[0]!.upd)).toBe(N);
    expect(Number(rows[0]!.hot)).toBe(N);
  });
});
