import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServerHandle } from "../dev/temporal-dev-server.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createTestDatabase } from "../../test/helpers/db.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";

const SCRIPT = `export default async function run(input) { return { tick: input }; }`;

/**
 * A schedule outlives a restart of the whole stack: API and worker stopped, the Temporal dev server
 * (this file's own, not the shared one) stopped and started again on the same database file, a new
 * app on the same PostgreSQL and task queue: the schedule keeps firing, each firing a done job.
 */
describe("a schedule survives a restart of the whole stack", () => {
  const dir = mkdtempSync(join(tmpdir(), "agw-schedule-restart-"));
  let temporal: TemporalDevServerHandle | undefined;
  let app: TestApp | undefined;
  const db = createTestDatabase();

  const startTemporal = () => startTemporalDevServer({ dataDir: join(dir, "temporal"), cliPath: process.env.TEMPORAL_CLI_PATH || undefined, namespace: "default" });
  const startApp = async (address: string) =>
    startTestApp({ worker: true, databaseUrl: (await db).url, taskQueue: "schedule-restart", env: { TEMPORAL_ADDRESS: address, SCHEDULE_MIN_INTERVAL_SECONDS: "1" } });

  afterAll(async () => {
    await app?.close();
    await temporal?.stop();
    await (await db).drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps firing after API, worker and Temporal restart", { timeout: 240_000 }, async () => {
    temporal = await startTemporal();
    app = await startApp(temporal.address);
    const { adminToken } = await createAccount(app.url, app.operatorToken, "restart", "10");
    const agentId = await createAgent(app.url, adminToken, { name: "ticker", script: SCRIPT });
    const created = await gql(app.url, adminToken, `mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, { i: { agentId, every: "2s" } });
    const id: string = created.data.createSchedule.id;
    const doneSince = async (since: Date) => {
      const { rows } = await app!.runtime.pool.query("select count(*)::int as n from jobs where schedule_id = $1 and status = 'done' and source = 'schedule' and created_at > $2", [id, since]);
      return rows[0].n as number;
    };
    const waitDone = async (since: Date, n: number) => {
      const deadline = Date.now() + 90_000;
      while ((await doneSince(since)) < n) {
        if (Date.now() > deadline) throw new Error(`fewer than ${n} done firings since ${since.toISOString()}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    await waitDone(new Date(0), 2);

    await app.close();
    app = undefined;
    await temporal.stop();
    temporal = await startTemporal();
    const restartedAt = new Date();
    app = await startApp(temporal.address);
    await waitDone(restartedAt, 2);
    const listed = await gql(app.url, adminToken, `query($id: ID!) { schedule(id: $id) { paused nextRunTimes } }`, { id });
    expect(listed.data.schedule.paused).toBe(false);
    expect(listed.data.schedule.nextRunTimes.length).toBeGreaterThan(0);
  });
});
