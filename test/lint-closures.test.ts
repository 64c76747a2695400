import { describe, expect, it } from "vitest";
import { pretenuredClosures } from "../scripts/check-closures.mjs";

const lines = (source: string) => pretenuredClosures(source).map((f) => f.line);

describe("lint:closures", () => {
  it("finds a function literal written into a property inside a function, cast or not", () => {
    const source = [
      "function route(res: any, state: any) {",
      "  res.json = (body: unknown) => body;",
      "  res.write = ((chunk: string) => !!chunk) as (c: string) => boolean;",
      '  res["end"] = function () { return state; };',
      "  const f = async () => { state.later = async () => res; };",
      "}",
    ].join("\n");
    expect(lines(source)).toEqual([2, 3, 4, 5]);
  });

  it("leaves alone what V8 allocates young, or what runs once at load", () => {
    const source = [
      "exports.handler = () => 1;",
      "function route(res: any, state: any) {",
      "  const json = (body: unknown) => body;",
      "  res.json = json;",
      "  res.other = { fn: () => state };",
      "  res.on('close', () => state);",
      "  state.onRateLimit = make(state);",
      "  res.count = 1;",
      "  // Once per process: the pool's query, wrapped at start.",
      "  res.query = () => 2;",
      "  return () => res;",
      "}",
    ].join("\n");
    expect(lines(source)).toEqual([]);
  });
});
