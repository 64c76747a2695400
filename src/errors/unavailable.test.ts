import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { unavailableError } from "./unavailable.js";

describe("database outages map to 503 with Retry-After", () => {
  it("recognises PostgreSQL shutdown/connection errors, socket errors and node-postgres messages", () => {
    const cases: unknown[] = [
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("the database system is starting up"), { code: "57P03" }),
      Object.assign(new Error("connection failure"), { code: "08006" }),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      new AggregateError([Object.assign(new Error("connect ECONNREFUSED ::1:5432"), { code: "ECONNREFUSED" })], ""),
      new Error("query failed", { cause: Object.assign(new Error("x"), { code: "57P01" }) }),
    ];
    for (const err of cases) {
      const mapped = unavailableError(err);
      expect(mapped?.status, String(err)).toBe(503);
      expect(mapped?.headers["Retry-After"]).toBe("1");
    }
  });

  it("leaves every other error alone (bugs stay 500), whatever it looks like", () => {
    expect(unavailableError(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBeUndefined();
    expect(unavailableError(new TypeError("x is undefined"))).toBeUndefined();
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const looksLikeOutage = JSON.stringify(value ?? null)?.match(/ECONN|08...|57P0|53300|Connection terminated|terminating connection/);
        if (!looksLikeOutage) expect(unavailableError(value)).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
