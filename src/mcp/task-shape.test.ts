import { describe, expect, it } from "vitest";
import type { JobRow } from "../jobs/store.js";
import { detailedTask, taskHandle } from "./task-shape.js";

const job = (over: Partial<JobRow>): JobRow => ({
  id: "job_1", accountId: "acc", agentId: "agt", triggerId: null, status: "running", source: "mcp", scheduleId: null, threadId: null,
  result: null, error: null, attempts: 1, costMicros: 0, logs: null, createdAt: new Date(0), startedAt: new Date(1), finishedAt: null, ...over,
});

/** A job as an MCP Tasks task: only an ended job is completed or cancelled; one that asks is input_required with its question. */
describe("a job as a Tasks-extension task", () => {
  it("a job waiting for a person's answer is input_required, its question a form elicitation keyed by the request's id, and no result", () => {
    const question = { id: "inp_1", prompt: "Approve?", schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } };
    const t = detailedTask(job({ status: "input_required" }), question);
    expect(t).toMatchObject({ status: "input_required", inputRequests: { inp_1: { method: "elicitation/create", params: { mode: "form", message: "Approve?", requestedSchema: question.schema } } } });
    expect(t).not.toHaveProperty("result");
    expect(taskHandle(job({ status: "input_required" })).status).toBe("input_required");
    // Answered or expired a moment ago (the job not yet queued again): no question to offer, still working.
    expect(detailedTask(job({ status: "input_required" }))).toMatchObject({ status: "working", statusMessage: "input_required" });
  });

  it("queued and running are working; done is completed with the result; a cancelled job is cancelled", () => {
    expect(detailedTask(job({ status: "queued", startedAt: null })).status).toBe("working");
    expect(detailedTask(job({ status: "done", result: { ok: 1 }, finishedAt: new Date(2) }))).toMatchObject({ status: "completed", result: { resultType: "complete" } });
    expect(detailedTask(job({ status: "failed", error: "cancelled", finishedAt: new Date(2) })).status).toBe("cancelled");
  });
});
