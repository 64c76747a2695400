import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlNames } from "./names.js";
import { entities } from "./schema.js";
import { useTestDatabaseClient } from "../../test/helpers/db.js";
import { statement } from "./statement.js";

describe("names for hand-written SQL", () => {
  const db = useTestDatabaseClient(beforeAll, afterAll);

  it("every table and column derived from the entities exists in the migrated database", async () => {
    const { rows } = await db().query<{ t: string; c: string }>(
      "select table_name as t, column_name as c from information_schema.columns where table_schema = 'public'",
    );
    const columns = new Set(rows.map((r) => `${r.t}.${r.c}`));
    for (const entity of entities) {
      const { table, ...cols } = sqlNames(entity as Parameters<typeof sqlNames>[0]) as Record<string, string>;
      for (const column of Object.values(cols)) expect(columns, `${table}.${column}`).toContain(`${table}.${column}`);
    }
  });
});

describe("statements with named parameters", () => {
  it("numbers each name once, in order of first use, and maps values by name", () => {
    const s = statement("t", (p) => `select ${p("a")}, ${p("b")}, ${p("a")}, ${p("c")}`);
    expect(s.text).toBe("select $1, $2, $1, $3");
    expect(s.with({ c: 3, b: 2, a: 1, extra: 9 })).toEqual({ name: "t", text: s.text, values: [1, 2, 3] });
  });

  it("refuses a call that misses a parameter", () => {
    const s = statement("t", (p) => `select ${p("a")}, ${p("b")}`);
    expect(() => s.with({ a: 1 })).toThrow(/missing parameter b/);
  });
});
