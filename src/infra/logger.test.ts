import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

describe("logger", () => {
  it("logs any value given as err (an Error, a string, an object) without throwing, secrets masked", () => {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on("data", (d: Buffer) => {
      for (const l of d.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
    });
    const log = createLogger("info", "test", stream);
    const token = `a2a_${"x".repeat(40)}`;
    for (const err of [new Error(`bad ${token}`), `Error: bad ${token}`, { code: "E" }, undefined, null, 42]) {
      expect(() => log.warn({ err }, "warned")).not.toThrow();
    }
    stream.end();
    return new Promise<void>((resolve) =>
      stream.on("end", () => {
        expect(lines).toHaveLength(6);
        expect(JSON.stringify(lines)).not.toContain(token);
        expect((lines[1]!.err as { message: string }).message).toMatch(/^Error: bad a2a_\[REDACTED\]/);
        resolve();
      }),
    );
  });
});
