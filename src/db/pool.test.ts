import "reflect-metadata";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";
import { testEnv } from "../../test/helpers/app.js";
import { createTestDatabase } from "../../test/helpers/db.js";

/**
 * One pool per process: MikroORM and the hand-written SQL run on the same `pg` pool, so under
 * load a process never holds more than DATABASE_POOL_SIZE connections (plus its LISTEN one), as
 * PostgreSQL itself sees them in pg_stat_activity.
 */
describe("one database pool per process", () => {
  const POOL_SIZE = 2;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: Runtime;
  let observer: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    runtime = await createRuntime(loadConfig(testEnv(db.url, { DATABASE_POOL_SIZE: String(POOL_SIZE) })), { role: "pooltest" });
    observer = new pg.Client({ connectionString: db.url, application_name: "observer" });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
    await runtime?.close();
    await db?.drop();
  });

  const backends = async () =>
    (
      await observer.query<{ pid: number; application_name: string }>(
        "select pid, application_name from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
      )
    ).rows;

  it("ORM queries and hand-written SQL share the pool's connections, visible per process in pg_stat_activity", async () => {
    const sql = "select pg_backend_pid() as pid from pg_sleep(0.02)";
    const orm = (): Promise<number> =>
      runtime.orm.em
        .fork()
        .getConnection()
        .execute<{ pid: number }[]>(sql)
        .then((rows) => rows[0]!.pid);
    const raw = (): Promise<number> => runtime.pool.query<{ pid: number }>(sql).then((r) => r.rows[0]!.pid);
    // A transaction through the ORM too (it checks out a connection for its whole duration).
    const tx = (): Promise<number> =>
      runtime.orm.em.fork().transactional(async (em) => (await em.getConnection().execute<{ pid: number }[]>(sql, [], "all", em.getTransactionContext()))[0]!.pid);

    const seen: { pid: number; application_name: string }[][] = [];
    const load = Promise.all(Array.from({ length: 60 }, (_, i) => [orm, raw, tx][i % 3]!()));
    for (let i = 0; i < 5; i++) seen.push(await backends()); // sampled while the load runs
    const pids = await load;
    seen.push(await backends());

    const distinct = new Set(pids);
    expect(distinct.size).toBeLessThanOrEqual(POOL_SIZE);
    for (const sample of seen) {
      const names = sample.map((b) => b.application_name).sort();
      // Every connection of this process carries its role; only the pool's and the LISTEN one.
      expect(names.filter((n) => n !== "agw-pooltest" && n !== "agw-pooltest-listen")).toEqual([]);
      expect(names.filter((n) => n === "agw-pooltest").length).toBeLessThanOrEqual(POOL_SIZE);
      expect(names.filter((n) => n === "agw-pooltest-listen").length).toBe(1);
    }
    const final = seen.at(-1)!.filter((b) => b.application_name === "agw-pooltest").map((b) => b.pid);
    for (const pid of distinct) expect(final).toContain(pid);
  });

  it("a connection checked out of the pool whose backend is terminated between queries fails its next query and ends nothing else", async () => {
    const client = await runtime.pool.connect();
    const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
    await observer.query("select pg_terminate_backend($1)", [rows[0]!.pid]);
    // The termination reaches the client as an error event while no query runs: heard, not uncaught.
    await new Promise((r) => setTimeout(r, 200));
    await expect(client.query("select 1")).rejects.toThrow();
    client.release(true);
    expect((await runtime.pool.query<{ ok: number }>("select 1 as ok")).rows[0]!.ok).toBe(1);
  });

  it("a statement PostgreSQL aborts to break a deadlock runs again: the caller gets its result, applied once", async () => {
    await observer.query("create table deadlock_probe (id int primary key, v int not null); insert into deadlock_probe values (1, 0), (2, 0)");
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query("begin");
      await other.query("update deadlock_probe set v = v + 10 where id = 1");
      // Locks row 2, then waits for row 1 (the other transaction's); that one then waits for row 2:
      // a cycle, and PostgreSQL aborts the first to wait when its deadlock_timeout (1 s) ends.
      const statement = runtime.pool.query<{ v: number }>(
        "with a as (update deadlock_probe set v = v + 1 where id = 2 returning 1) update deadlock_probe set v = v + 1 where id = 1 and exists (select 1 from a) returning v",
      );
      const settled = statement.then(
        (r) => ({ rows: r.rows }),
        (err: unknown) => ({ err }),
      );
      await new Promise((r) => setTimeout(r, 200));
      const second = other.query("update deadlock_probe set v = v + 100 where id = 2");
      await second;
      await other.query("commit");
      expect(await settled).toEqual({ rows: [{ v: 11 }] });
    } finally {
      await other.end();
    }
    const { rows } = await observer.query("select id, v from deadlock_probe order by id");
    expect(rows).toEqual([{ id: 1, v: 11 }, { id: 2, v: 101 }]);
  }, 30_000);
});
