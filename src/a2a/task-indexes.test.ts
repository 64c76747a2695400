import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabaseClient } from "../../test/helpers/db.js";
import { A2aTask } from "../db/schema.js";
import { sqlNames } from "../db/names.js";

/**
 * A chat task's end, when its record was written before it (a non-blocking send, a stream whose id
 * left early: a2a/chat-task-store.ts), changes the state, answer, error, updated_at and followed columns.
 * One index takes one of them: ListTasks' (agent_id, updated_at, id), which serves its pages in
 * keyset order (a2a.list.test.ts); no other index may, so such an end writes one entry in it and
 * in the indexes of the row's new version, and a blocking send's task (inserted already ended)
 * none. The state, answer, error and followed columns stay out of every index.
 */
describe("a2a_tasks indexes", () => {
  const T = sqlNames(A2aTask);
  const ended = [T.state, T.answer, T.error, T.updatedAt, "followed"];
  const db = useTestDatabaseClient(beforeAll, afterAll);

  it("of the columns the end of a task changes, only updated_at is indexed, and only by ListTasks' index", async () => {
    const { rows } = await db().query<{ index: string; column: string }>(
      `select i.relname as index, a.attname as column from pg_index x join pg_class i on i.oid = x.indexrelid
         join pg_attribute a on a.attrelid = x.indrelid and a.attnum = any(x.indkey) where x.indrelid = $1::regclass`,
      [T.table],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => ended.includes(r.column))).toEqual([{ index: "a2a_tasks_agent_updated_idx", column: T.updatedAt }]);
    expect(rows.filter((r) => r.index === "a2a_tasks_agent_updated_idx").map((r) => r.column).sort()).toEqual([T.agent, T.id, T.updatedAt].sort());
  });

  it("the lookups by agent (the reclaim's, the agents' delete trigger) go through ListTasks' index: no index of the agent alone doubles it, no key is checked on insert, and none of the account (columns, not keys)", async () => {
    const { rows } = await db().query<{ index: string }>(`select indexrelid::regclass::text as index from pg_index where indrelid = $1::regclass order by 1`, [T.table]);
    expect(rows.map((r) => r.index)).toEqual(["a2a_tasks_agent_updated_idx", "a2a_tasks_pkey"]);
    const keys = await db().query<{ target: string }>(`select confrelid::regclass::text as target from pg_constraint where conrelid = $1::regclass and contype = 'f'`, [T.table]);
    expect(keys.rows.map((r) => r.target)).toEqual([]);
    const triggers = await db().query<{ name: string }>(`select tgname as name from pg_trigger where tgrelid = 'agents'::regclass and not tgisinternal`);
    expect(triggers.rows.map((r) => r.name)).toEqual(["delete_a2a_tasks"]);
    await db().query("begin");
    try {
      // The table is empty here: without this the planner reads it whole, whatever the indexes.
      await db().query("set local enable_seqscan = off");
      const plan = await db().query<{ "QUERY PLAN": string }>(`explain select ${T.id} from ${T.table} where ${T.agent} = 'agt_x' and ${T.contextId} = 'thr_x' and ${T.kind} = 'chat'`);
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("a2a_tasks_agent_updated_idx");
    } finally {
      await db().query("rollback");
    }
  });
});
