import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase } from "../../test/helpers/db.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { gql } from "../../test/helpers/graphql.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the CLI exactly as `npm run -s admin -- …` does (same node flags, same entry). */
function admin(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--enable-source-maps", "--import", "@swc-node/register/esm-register", "src/admin/cli.ts", ...args],
      { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("admin CLI", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
  });
  afterAll(async () => db?.drop());

  it("create-account --json prints exactly one JSON object on stdout, and the token works", async () => {
    const r = await admin(["create-account", "--name", "acme", "--balance", "10", "--json"], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const out = JSON.parse(r.stdout) as { accountId: string; adminToken: string };
    expect(Object.keys(out).sort()).toEqual(["accountId", "adminToken"]);
    expect(out.accountId).toMatch(/^acc_/);
    expect(out.adminToken).toMatch(/^adm_[0-9A-Za-z]{43}$/);

    const app: TestApp = await startTestApp({ databaseUrl: db.url });
    try {
      const me = await gql(app.url, out.adminToken, "{ me { id name balance } }");
      expect(me.data).toEqual({ me: { id: out.accountId, name: "acme", balance: "10.000000" } });
    } finally {
      await app.close();
    }
  });

  it("top-up and create-admin-token print their JSON objects; the ledger matches the balance", async () => {
    const { accountId } = JSON.parse((await admin(["create-account", "--name", "globex", "--json"], env)).stdout);
    const top = await admin(["top-up", "--account", accountId, "--amount", "2.5", "--json"], env);
    expect(top.code).toBe(0);
    expect(JSON.parse(top.stdout)).toEqual({ accountId, balance: "2.500000" });
    const tok = await admin(["create-admin-token", "--account", accountId, "--json"], env);
    expect(tok.code).toBe(0);
    expect(Object.keys(JSON.parse(tok.stdout))).toEqual(["adminToken"]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query("select (select balance_micros from accounts where id = $1) as b, (select sum(amount_micros) from ledger_entries where account_id = $1) as l", [accountId]);
    await client.end();
    expect(String(rows[0].b)).toBe("2500000");
    expect(String(rows[0].l)).toBe("2500000");
  });

  it("without --json prints a human sentence", async () => {
    const r = await admin(["create-account", "--name", "initech"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Created account acc_\w+ \(initech\) with balance 0\.000000 USD\.\nAdmin token \(shown once\): adm_/);
  });

  it("bad input: a clear message on stderr, nothing on stdout, non-zero exit", async () => {
    const cases: [string[], RegExp][] = [
      [["create-account", "--json"], /--name is required/],
      [["create-account", "--name", "x", "--balance=-5", "--json"], /--balance must be a decimal USD amount/],
      [["create-account", "--name", "x", "--balance", "ten", "--json"], /--balance must be a decimal USD amount/],
      [["top-up", "--account", "acc_nope", "--amount", "0", "--json"], /--amount must be greater than zero/],
      [["top-up", "--account", "acc_nope", "--amount", "1", "--json"], /Account acc_nope not found/],
      [["frobnicate"], /Unknown command "frobnicate"/],
      [["create-account", "--name", "x", "--bogus"], /Unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      const r = await admin(args, env);
      expect(r.code, args.join(" ")).not.toBe(0);
      expect(r.stdout, args.join(" ")).toBe("");
      expect(r.stderr, args.join(" ")).toMatch(message);
    }
  });

  it("opens its connections through the data layer (src/db): they carry its application_name, agw-admin, as every process's do", async () => {
    // What a connection calls itself, seen by the database: a trigger on the account insert records it.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("create table cli_seen (application_name text)");
      await client.query(`create function cli_seen() returns trigger language plpgsql as $$ begin insert into cli_seen values (current_setting('application_name')); return new; end $$`);
      await client.query("create trigger cli_seen after insert on accounts for each row execute function cli_seen()");
      const r = await admin(["create-account", "--name", "seen", "--json"], env);
      expect(r.code, r.stderr).toBe(0);
      expect((await client.query("select application_name from cli_seen")).rows).toEqual([{ application_name: "agw-admin" }]);
    } finally {
      await client.query("drop trigger if exists cli_seen on accounts; drop function if exists cli_seen(); drop table if exists cli_seen");
      await client.end();
    }
  });

  it("says on stderr which database it wrote to", async () => {
    const r = await admin(["create-account", "--name", "where", "--json"], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^wrote to DATABASE_URL postgres:\/\/[^\s]*\*\*\*@/m);
    expect(r.stderr).not.toContain(`:${new URL(db.url).password}@`);
  });

  it("with no running instance on DATA_DIR, refuses to write, naming the DATA_DIR it looked in and how to point it elsewhere; --start-database writes there", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agw-cli-nothing-"));
    try {
      const alone = { DATABASE_URL: "", DATA_DIR: dataDir };
      const refused = await admin(["create-account", "--name", "lost", "--json"], alone);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(`no running npm start (or npm run stack:prod) found in DATA_DIR ${dataDir}, so nothing was written`);
      expect(refused.stderr).toMatch(/DATA_DIR=\/path\/to\/its\/data npm run admin/);
      expect(refused.stderr).toMatch(/DATABASE_URL=postgres:\/\/… npm run admin/);
      expect(refused.stderr).toMatch(/--start-database/);
      expect(existsSync(join(dataDir, "postgres"))).toBe(false); // no throwaway database was made

      const asked = await admin(["create-account", "--name", "here", "--json", "--start-database"], alone);
      expect(asked.code, asked.stderr).toBe(0);
      expect(JSON.parse(asked.stdout).adminToken).toMatch(/^adm_/);
      expect(asked.stderr).toContain(`wrote to the dev database in ${join(dataDir, "postgres")} (started for this command: no npm start was running)`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("import-script sends a module file through the API as the account's admin; errors name the file, line and column", async () => {
    const created = JSON.parse((await admin(["create-account", "--name", "scripts", "--json"], env)).stdout) as { adminToken: string };
    const app: TestApp = await startTestApp({ databaseUrl: db.url });
    const dir = mkdtempSync(join(tmpdir(), "agw-import-"));
    try {
      const agent = await gql(app.url, created.adminToken, `mutation { createAgent(input: { name: "imp" }) { id } }`);
      const id = agent.data!.createAgent.id as string;
      const bad = join(dir, "bad.js");
      writeFileSync(bad, "export default async function run(input) {\n  return input +;\n}\n");
      const r1 = await admin(["import-script", "--agent", id, "--file", bad, "--token", created.adminToken, "--url", app.url], env);
      expect(r1.code).toBe(1);
      expect(r1.stderr).toMatch(/bad\.js: script: SyntaxError.*\(line 2, column \d+\)/);
      const good = join(dir, "good.js");
      writeFileSync(good, "export default async function run(input) {\n  return { echo: input };\n}\n");
      const r2 = await admin(["import-script", "--agent", id, "--file", good, "--token", created.adminToken, "--url", app.url, "--json"], env);
      expect(r2.code).toBe(0);
      expect(JSON.parse(r2.stdout)).toEqual({ agentId: id, bytes: 71 });
      const after = await gql(app.url, created.adminToken, `query($id: ID!) { agent(id: $id) { kind script } }`, { id });
      expect(after.data!.agent).toEqual({ kind: "AUTOMATION", script: "export default async function run(input) {\n  return { echo: input };\n}\n" });
      // Another account's admin token cannot import into this agent.
      const other = JSON.parse((await admin(["create-account", "--name", "other", "--json"], env)).stdout) as { adminToken: string };
      const r3 = await admin(["import-script", "--agent", id, "--file", good, "--token", other.adminToken, "--url", app.url], env);
      expect(r3.code).toBe(1);
      expect(r3.stderr).toMatch(/not found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await app.close();
    }
  });
});
