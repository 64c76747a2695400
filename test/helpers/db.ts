import pg from "pg";
import { inject } from "vitest";
import { randomBase62 } from "../../src/infra/ids.js";

/** A fresh database cloned from the migrated template; dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const adminUrl = inject("pgAdminUrl");
  const template = inject("templateDb");
  const name = `t_${randomBase62(8).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // Cloning needs the template to have no other sessions; retry briefly if two files race.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database "${name}" template "${template}"`);
        break;
      } catch (err) {
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/[^/]+$/, `/${name}`);
  return {
    url,
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`).catch(() => {});
      await c.end();
    },
  };
}

/** A fresh database and one client on it, for a test file's lifetime (vitest hooks). */
export function useTestDatabaseClient(beforeAll: (f: () => Promise<void>) => void, afterAll: (f: () => Promise<void>) => void): () => pg.Client {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });
  return () => {
    if (!client) throw new Error("the test database is not ready yet (use it inside tests)");
    return client;
  };
}
