import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/**
 * An API-only process (`npm run serve`) must not load the Temporal worker SDK: it and its native
 * bridge are ~16 MB of resident memory, and the API's memory is what bounds how many slow streams
 * one instance holds (BENCHMARKS.md, 1,000 slow streams under 300 MB). Checked in a fresh process,
 * since this one has loaded the SDK for other tests.
 */
describe("composition root", () => {
  it("loads @temporalio/worker only when a worker is asked for", () => {
    const probe = `
      import { createRequire } from "node:module";
      await import(${JSON.stringify(new URL("./app.ts", import.meta.url).href)});
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ worker: loaded.some((k) => k.includes("/@temporalio/worker/")), client: loaded.some((k) => k.includes("/@temporalio/client/")) }));`;
    const out = execFileSync(process.execPath, ["--import", "@swc-node/register/esm-register", "--input-type=module", "-e", probe], { encoding: "utf8" });
    // The client is the API's own dependency (it starts workflows); the worker is not.
    expect(JSON.parse(out.trim().split("\n").at(-1)!)).toEqual({ worker: false, client: true });
  });
});
