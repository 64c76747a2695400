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
});
