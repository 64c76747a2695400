import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type CallToolResult, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { AppError } from "../errors/app-error.js";
import { cancelJob } from "../jobs/control.js";
import type { JobRow } from "../jobs/store.js";
import type { Runtime } from "../runtime/runtime.js";
import { callerOf } from "./auth.js";
import { agentJob } from "./job-result.js";
import { detailedTask, TASKS_EXTENSION } from "./task-shape.js";
import { modernToolCall, tasksDeclared } from "./modern-call.js";
import { toolError } from "./tool-result.js";
import { objectSchema, type ToolSpec } from "./tool-spec.js";

/**
 * The Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) on an automation agent's
 * server: a `run` not done within `wait_seconds` answers, for a client that declared the
 * extension on that request, as a task whose id is the job id (job-tools.ts); `tasks/get` reads
 * the job, `tasks/cancel` cancels it (cancelJob, as GraphQL and A2A do), `tasks/update` would
 * answer its input request. The SDK v2 has no server side for the extension, so its methods are
 * registered here with their own params schemas (the SDK lets extension methods through that way).
 *
 * tools/call is ours too on this server: the SDK's McpServer validates every tool result against
 * the tool's output schema, which a task handle is not. The arguments are checked with the same
 * schemas the SDK checks (the tools' input shapes), with its message.
 */

const TASK_ID = z.object({ taskId: z.string() });

/** -32021: tasks/* are for clients that declared the extension (its specification's MUST). */
function requireTasks(ctx: ServerContext): void {
  if (!tasksDeclared(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

const notFound = (taskId: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task ${taskId} not found`);

export function serveTasks(server: McpServer, runtime: Runtime, specs: ToolSpec[]): void {
  const inputs = new Map(specs.map((spec) => [spec.name, objectSchema(spec.input)]));
  const low = server.server;

  /** The caller's job for a task id, or -32602 (another agent's job is not found either, as get_job). */
  const taskJob = async (taskId: string, ctx: ServerContext): Promise<JobRow> => {
    requireTasks(ctx);
    try {
      return await agentJob(runtime, callerOf({ authInfo: ctx.http?.authInfo }), taskId);
    } catch (err) {
      if (err instanceof AppError && err.code === "job_not_found") throw notFound(taskId);
      throw err;
    }
  };

  low.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args } = request.params;
    const spec = specs.find((s) => s.name === name);
    const input = inputs.get(name);
    if (!spec || !input) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    const parsed = input.safeParse(args ?? {});
    if (!parsed.success) return toolError(`Input validation error: Invalid arguments for tool ${name}: ${z.prettifyError(parsed.error)}`);
    // A task handle is a result the SDK's types do not know (the extension's `resultType: "task"`);
    // the SDK passes it through as it is.
    return (await spec.call(parsed.data, modernToolCall(ctx, tasksDeclared(ctx)))) as CallToolResult;
  });

  low.setRequestHandler("tasks/get", { params: TASK_ID }, async ({ taskId }, ctx) => detailedTask(await taskJob(taskId, ctx)));

  low.setRequestHandler("tasks/cancel", { params: TASK_ID }, async ({ taskId }, ctx) => {
    const job = await taskJob(taskId, ctx);
    try {
      await cancelJob(runtime, job.accountId, job.id);
    } catch (err) {
      // Already finished: cancelling is cooperative, the acknowledgement stands (tasks/get says how it ended).
      if (!(err instanceof AppError && err.code === "job_finished")) throw err;
    }
    return { resultType: "complete" };
  });

  // A job's question (ctx.ask) is not offered as the extension's inputRequests (its elicitation
  // schema is narrower than a ctx.ask schema: docs/design/mcp.md), so no answer comes this way yet. The
  // SDK lifts `inputResponses` out of the params (ctx.mcpReq.inputResponses); unread here.
  low.setRequestHandler("tasks/update", { params: TASK_ID }, async ({ taskId }, ctx) => {
    const job = await taskJob(taskId, ctx);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${job.id} has no outstanding input request (answer a job's question through GraphQL answerJobInput, its answer URL or A2A)`, { reason: "no_input_request" });
  });
}
