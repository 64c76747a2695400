import { CLIENT_CAPABILITIES_META_KEY, type ServerContext } from "@modelcontextprotocol/server";
import { callerOf } from "./auth.js";
import { TASKS_EXTENSION } from "./task-shape.js";
import { progressOf, type InputRounds, type ToolCall } from "./tool-spec.js";

/** The request declared the Tasks extension in its per-request client capabilities (the `_meta` envelope). */
export function tasksDeclared(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof declared === "object" && declared !== null;
}

/** The request declared form elicitation (`elicitation: {}` means form, per the specification). */
function formElicitationDeclared(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  const e = capabilities?.elicitation;
  return typeof e === "object" && e !== null && (e.form !== undefined || e.url === undefined);
}

/** What a tool call knows of a 2026-07-28 request: its caller, its signal, its progress token, whether it takes a task, and its input rounds. */
export function modernToolCall(ctx: ServerContext, tasks: boolean): ToolCall {
  const requestState = ctx.mcpReq.requestState?.();
  const rounds: InputRounds = {
    elicits: formElicitationDeclared(ctx),
    ...(ctx.mcpReq.inputResponses ? { responses: ctx.mcpReq.inputResponses } : {}),
    ...(typeof requestState === "string" ? { requestState } : {}),
  };
  const call: ToolCall = { principal: callerOf({ authInfo: ctx.http?.authInfo }), signal: ctx.mcpReq.signal, tasks, rounds };
  const token = ctx.mcpReq._meta?.progressToken;
  if (token !== undefined) {
    call.progress = progressOf((n) => ctx.mcpReq.notify(n), token);
  }
  return call;
}
