import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../dev/free-port.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createTestDatabase } from "../../test/helpers/db.js";
import { triggerFixture, waitForJobEnd } from "../../test/helpers/jobs.js";
import { postWebhook } from "../../test/helpers/webhooks.js";

/**
 * "A 202 is never lost": an instance that accepted webhooks but could not start their workflows
 * (Temporal unreachable) goes away; a fresh instance on the same database must start that backlog
 * on its own — before, and without, receiving any webhook itself.
 */
describe("an API instance starts the committed backlog when it starts", () => {
  const apps: TestApp[] = [];
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  afterAll(async () => {
    for (const a of apps.reverse()) await a.close();
    await db?.drop();
  });

  it("runs jobs accepted by an instance that died before dispatching them", async () => {
    db = await createTestDatabase();
    const shared = { databaseUrl: db.url, secretEncryptionKey: randomBytes(32).toString("base64") };
    const first = await startTestApp({ ...shared, env: { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` } });
    apps.push(first);
    const { adminToken, triggerId, secret } = await triggerFixture(first.url, first.operatorToken);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await postWebhook(first.url, triggerId, JSON.stringify({ i }), { "x-trigger-secret": secret });
      expect(r.status).toBe(202);
      ids.push(r.body.job_id);
    }
    await first.close();
    apps.pop();

    // Same database and operator; the real Temporal; a worker; no webhook is ever sent to it.
    const second = await startTestApp({ ...shared, operatorToken: first.operatorToken, worker: true });
    apps.push(second);
    for (const id of ids) expect(await waitForJobEnd(second.url, adminToken, id, 60_000)).toBe("DONE");
  });
});
