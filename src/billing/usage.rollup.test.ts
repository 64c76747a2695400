import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../../test/helpers/db.js";
import { newId } from "../infra/ids.js";
import { CALL_KINDS, USAGE_DIMENSIONS, usage, type UsageDimensionName } from "./usage.js";

/**
 * usage() reads whole hours from usage_rollups (kept by the ledger's insert trigger) and the
 * partial hours at a range's ends from the ledger. Generated histories (holds, releases that hand
 * money back, extra charges, top-ups that are not usage; across agents, models, keys and days,
 * inserted a few rows per statement) and generated ranges and groupings: usage() must equal the
 * plain aggregate over the ledger, row for row, to the micro-dollar.
 */
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 5, 1);
const DIMS = Object.keys(USAGE_DIMENSIONS) as UsageDimensionName[];

/** The reference: usage() as it was before the rollup, straight from the ledger. */
async function fromLedger(db: pg.Pool, accountId: string, from: Date, to: Date, groupBy: UsageDimensionName[]) {
  const dims = [...new Set(groupBy)].map((d) => USAGE_DIMENSIONS[d]);
  const select = Object.values(USAGE_DIMENSIONS)
    .map((d) => (dims.includes(d) ? `${d.column} as "${d.as}"` : `null as "${d.as}"`))
    .join(", ");
  const group = dims.length ? `group by ${dims.map((d) => d.column).join(", ")}` : "";
  const { rows } = await db.query(
    `select ${select}, coalesce(-sum(amount_micros), 0)::bigint as "costMicros", (count(*) filter (where kind = 'hold'))::int as "requests",
            coalesce(sum(input_tokens), 0)::bigint as "inputTokens", coalesce(sum(output_tokens), 0)::bigint as "outputTokens"
     from ledger_entries where account_id = $1 and kind in ${CALL_KINDS} and created_at >= $2 and created_at < $3
     ${group} order by 1, 2, 3, 4, 5, 6`,
    [accountId, from, to],
  );
  return rows;
}

const row = fc.record({
  kind: fc.constantFrom("hold", "hold_release", "charge", "top_up"),
  // Up to 10^12 micro-USD a row: a sum of many stays exact only if nothing goes through a float.
  amount: fc.bigInt({ min: 0n, max: 1_000_000_000_000n }),
  agent: fc.constantFrom("agt_a", "agt_b", null),
  model: fc.constantFrom("provider_a/m1", "provider_b/m2", null),
  key: fc.constantFrom("key_1", "key_2", null),
  at: fc.integer({ min: 0, max: 4 * DAY - 1 }),
  tokens: fc.nat(5000),
});
const range = fc.tuple(fc.integer({ min: -DAY, max: 5 * DAY }), fc.integer({ min: 1, max: 5 * DAY }));

describe("usage from the hourly rollup", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it("equals the ledger's aggregate for generated histories, ranges and groupings", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(row, { minLength: 1, maxLength: 6 }), { maxLength: 12 }),
        fc.array(fc.tuple(range, fc.subarray(DIMS)), { minLength: 1, maxLength: 6 }),
        async (statements, queries) => {
          const accountId = newId("acc");
          await pool.query("insert into accounts (id, name, balance_micros) values ($1, 'p', 0)", [accountId]);
          for (const rows of statements) {
            // One statement per batch: the trigger sums a statement's rows per hour before adding them.
            const values = rows.map((_, i) => `($1, $${i * 7 + 2}, $${i * 7 + 3}, $${i * 7 + 4}, $${i * 7 + 5}, $${i * 7 + 6}, $${i * 7 + 7}, $${i * 7 + 8}, 'r')`);
            const params = rows.flatMap((r) => [
              (r.kind === "hold" || r.kind === "charge" ? -r.amount : r.amount).toString(),
              r.kind,
              r.agent,
              r.model,
              r.key,
              new Date(T0 + r.at),
              r.kind === "hold_release" ? r.tokens : 0,
            ]);
            await pool.query(
              `insert into ledger_entries (account_id, amount_micros, kind, agent_id, model, api_key_id, created_at, input_tokens, output_tokens, reference)
               select v.a, v.b::bigint, v.c, v.d, v.e, v.f, v.g::timestamptz, v.h::int, v.h::int * 2, v.r from (values ${values.join(", ")}) v(a, b, c, d, e, f, g, h, r)`,
              [accountId, ...params],
            );
          }
          for (const [[start, length], groupBy] of queries) {
            const from = new Date(T0 + start);
            const to = new Date(T0 + start + length);
            const expected = await fromLedger(pool, accountId, from, to, groupBy);
            expect(await usage(pool, accountId, from, to, groupBy)).toEqual(expected);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("is exact on hour boundaries, inside one hour, and across the range's partial hours", async () => {
    const accountId = newId("acc");
    await pool.query("insert into accounts (id, name, balance_micros) values ($1, 'p', 0)", [accountId]);
    const at = (ms: number) => new Date(T0 + ms);
    for (const ms of [0, 1, 3_599_999, 3_600_000, 3_600_001, 7_200_000 - 1, DAY - 1, DAY]) {
      await pool.query(
        `insert into ledger_entries (account_id, amount_micros, kind, agent_id, model, created_at) values ($1, -7, 'hold', 'agt_a', 'm', $2), ($1, 3, 'hold_release', 'agt_a', 'm', $2)`,
        [accountId, at(ms)],
      );
    }
    // The hours are in the rollup (this is not the ledger answering alone): 8 calls in 4 hours.
    const { rows } = await pool.query("select count(*)::int as n, sum(requests)::int as r from usage_rollups where account_id = $1", [accountId]);
    expect(rows[0]).toEqual({ n: 4, r: 8 });
    for (const [a, b] of [[0, 3_600_000], [1, 3_600_000], [0, 3_600_001], [3_599_999, 3_600_001], [1, DAY], [0, DAY + 1], [500, 600]]) {
      for (const groupBy of [[], ["DAY"], ["AGENT", "MODEL", "DAY"]] as UsageDimensionName[][]) {
        expect(await usage(pool, accountId, at(a!), at(b!), groupBy)).toEqual(await fromLedger(pool, accountId, at(a!), at(b!), groupBy));
      }
    }
  });
});
