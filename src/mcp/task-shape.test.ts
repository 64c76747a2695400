import { describe, expect, it } from "vitest";
import type { JobRow } from "../jobs/store.js";
import { detailedTask, taskHandle } from "./task-shape.js";

const job = (over: Partial<JobRow>): JobRow => ({
  id: "job_1", accountId: "acc", agentId: "agt", triggerId: null, status: "running", source: "mcp", scheduleId: null, threadId: null,
  result: null, error: null, attempts: 1, costMicros: 0, logs: null, createdAt: new Date(0), startedAt: new Date(1), finishedAt: null, ...over,
});

/** A job as an MCP Tasks task: only an ended job is completed or cancelled; one that asks is still working. */
describe("a job as a Tasks-extension task", () => {
  it("a job waiting for a person's answer is working, with input_required as its message and no result", () => {
    const t = detailedTask(job({ status: "input_required" }));
    expect(t).toMatchObject({ status: "working", statusMessage: "input_required" });
    expect(t).not.toHaveProperty("result");
    expect(taskHandle(job({ status: "input_required" })).status).toBe("working");
  });

  it("queued and running are working; done is completed with the result; a cancelled job is cancelled", () => {
    expect(detailedTask(job({ status: "queued", startedAt: null })).status).toBe("working");
    expect(detailedTask(job({ status: "done", result: { ok: 1 }, finishedAt: new Date(2) }))).toMatchObject({ status: "completed", result: { resultType: "complete" } });
    expect(detailedTask(job({ status: "failed", error: "cancelled", finishedAt: new Date(2) })).status).toBe("cancelled");
  });
});
