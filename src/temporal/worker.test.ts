import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";

describe("Temporal worker", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ worker: true });
  });
  afterAll(async () => app?.close());

  it("runs a real workflow with an activity that reads PostgreSQL, through the dev server", async () => {
    const handle = await app.runtime.temporal.client.workflow.start("healthCheck", {
      taskQueue: app.config.temporal.taskQueue,
      workflowId: `health-${Date.now()}`,
      args: ["round trip"],
    });
    const result = (await handle.result()) as { label: string; databaseTime: string };
    expect(result.label).toBe("round trip");
    expect(Math.abs(Date.parse(result.databaseTime) - Date.now())).toBeLessThan(60_000);
    const description = await handle.describe();
    expect(description.status.name).toBe("COMPLETED");
  });

  it("bundles the workflow code in a child process: webpack is never loaded into the worker's", async () => {
    // The workflow above ran from that bundle; bundling here would keep webpack resident (~100 MB).
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    // (The SDK's index loads webpack's index, whose members are lazy: the compiler is what bundling loads.)
    expect(loaded.filter((m) => /\/node_modules\/(webpack\/lib\/(webpack|Compiler)\.js|swc-loader\/)/.test(m))).toEqual([]);
    // The probe itself works: the Temporal SDK is in that cache.
    expect(loaded.some((m) => m.includes("/@temporalio/worker/"))).toBe(true);
  });
});
