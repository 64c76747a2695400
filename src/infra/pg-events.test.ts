import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../../test/helpers/db.js";
import { createLogger } from "./logger.js";
import { PgEvents } from "./pg-events.js";

/**
 * The listener connection dies (a database restart, an administrator's terminate) while a module
 * subscribes: the subscribe must neither reject (nobody may be awaiting it: an unhandled
 * rejection ends the process) nor lose the handler — the reconnect LISTENs again and it hears.
 */
describe("PgEvents when the listener connection is cut during a subscribe", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;
  let events: PgEvents;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    events = new PgEvents(db.url, pool, createLogger("silent"), "agw-events-test-listen");
    await events.start();
  });
  afterAll(async () => {
    await events?.close();
    await pool?.end();
    await db?.drop();
  });

  it("resolves, and the handler receives notifications after the reconnect", async () => {
    for (let round = 0; round < 5; round++) {
      const channel = `cut_channel_${round}`;
      const heard: string[] = [];
      // Terminate the listener backend, then subscribe before its client has processed the FATAL.
      await pool.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'agw-events-test-listen'");
      const subscribed = events.subscribe(channel, (p) => heard.push(p));
      await expect(subscribed).resolves.toBeTypeOf("function");
      const deadline = Date.now() + 30_000;
      while (!heard.includes("after") && Date.now() < deadline) {
        await events.publish(channel, "after");
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(heard).toContain("after");
    }
  });
});
