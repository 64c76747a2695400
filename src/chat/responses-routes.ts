import express from "express";
import { AppError } from "../errors/app-error.js";
import { unavailableError } from "../errors/unavailable.js";
import { randomBase62 } from "../infra/ids.js";
import type { KeyAuthenticator } from "../keys/auth.js";
import { checkModelOptions } from "../providers/index.js";
import type { Runtime } from "../runtime/runtime.js";
import { chooseModel, executeTurn, type TurnInput } from "./engine.js";
import type { Admission } from "./admission.js";
import type { InFlightTurns } from "./in-flight.js";
import { parseResponsesRequest } from "./responses-request.js";
import { loadResponse, saveResponse } from "./responses-store.js";
import { outputItems, ResponseEvents, responseObject, type ResponseShell } from "./responses-output.js";
import { SseResponse, sseData } from "./sse.js";

/**
 * The Responses API (docs/guides/chat.md) on the chat engine: same keys, holds, rate limits, threads and
 * errors as chat completions. A response belongs to a thread; previous_response_id continues it.
 */
export function responsesRouter(runtime: Runtime, admit: Admission, keys: KeyAuthenticator, turns: InFlightTurns): express.Router {
  const router = express.Router();

  router.get("/api/v1/responses/:id", async (req, res) => {
    const principal = await keys.authenticate(req.get("authorization"), req.get("x-api-key"));
    // The cached principal may be stale: the read itself re-checks the key (deleted or expired), in the same statement.
    const stored = await loadResponse(runtime.pool, String(req.params.id), { accountId: principal.agent.accountId, agentId: principal.agent.id, keyId: principal.keyId });
    res.json(stored.body);
  });

  router.post("/api/v1/responses", express.json({ limit: "4mb", type: () => true }), async (req, res) => {
    const { principal, onState, value } = await admit(req, res, async (principal) => {
      const r = parseResponsesRequest(req.body);
      const model = chooseModel(principal.agent, r.model);
      checkModelOptions(runtime.config, model, r, r.messages, (i, j) => `input[${r.inputIndex[i]}].content[${j}]`);
      let threadId = r.threadId;
      if (r.previousResponseId) {
        const prev = await loadResponse(runtime.pool, r.previousResponseId, { accountId: principal.agent.accountId, agentId: principal.agent.id }, "previous_response_id");
        if (threadId && threadId !== prev.threadId) throw new AppError("invalid_request_error", "thread_id and previous_response_id name different threads", { param: "thread_id" });
        threadId = prev.threadId;
      }
      return { r, threadId };
    });
    const { r, threadId } = value;
    const shell: ResponseShell = {
      id: `resp_${randomBase62(24)}`,
      created: Math.floor(Date.now() / 1000),
      model: r.model ?? principal.agent.defaultModel,
      threadId: threadId ?? "",
      previousResponseId: r.previousResponseId ?? null,
      req: r,
    };
    const input: TurnInput = {
      id: shell.id,
      agent: principal.agent,
      keyId: principal.keyId,
      threadId,
      model: r.model,
      messages: r.messages,
      maxTokens: r.maxTokens,
      options: r,
      instructions: r.instructions,
      toolResultParam: (i) => `input[${r.inputIndex[i] ?? i}].call_id`,
      rateLimit: { keyId: principal.keyId, limit: principal.rateLimitPerMinute, onState },
    };
    const finish = async (result: Awaited<ReturnType<typeof executeTurn>>, ids: { message: string; calls: string[] }) => {
      const output = outputItems(result, ids);
      const body = responseObject(shell, { output, text: result.content, result });
      if (r.store) await saveResponse(runtime.pool, { id: shell.id, accountId: principal.agent.accountId, agentId: principal.agent.id, threadId: shell.threadId, body });
      return body;
    };

    if (!r.stream) {
      const result = await turns.run(undefined, (signal) =>
        executeTurn(runtime, input, { signal, onStart: (info) => Object.assign(shell, { threadId: info.threadId, model: info.model }) }),
      );
      res.json(await finish(result, { message: `msg_${randomBase62(24)}`, calls: [] }));
      return;
    }

    const sse = new SseResponse(res);
    const events = new ResponseEvents((type, data) => sse.write(sseData(data, type)));
    // response.created and .in_progress go out with the first delta, so an upstream failure
    // before it still answers with a real HTTP status.
    const openStream = () => {
      if (sse.opened) return;
      sse.open(() => "");
      events.event("response.created", { response: responseObject(shell) });
      events.event("response.in_progress", { response: responseObject(shell) });
    };
    try {
      const result = await turns.run(sse.abort.signal, (signal) => executeTurn(runtime, input, {
        stream: true,
        signal,
        onStart: (info) => Object.assign(shell, { threadId: info.threadId, model: info.model }),
        onDelta: (text) => {
          openStream();
          events.text(text);
        },
        onToolCall: (d) => {
          openStream();
          events.toolCall(d);
        },
      }));
      if (result.aborted || sse.gone) return;
      openStream();
      events.close();
      const body = await finish(result, { message: events.messageId, calls: events.callIds });
      events.event(body.status === "incomplete" ? "response.incomplete" : "response.completed", { response: body });
      sse.end("");
    } catch (err) {
      if (sse.abort.signal.aborted) return;
      if (!sse.opened) throw err;
      const e = err instanceof AppError ? err : (unavailableError(err) ?? new AppError("upstream_error", "The upstream stream failed"));
      events.event("error", { code: e.code, message: e.message, param: e.param ?? null });
      events.event("response.failed", { response: { ...responseObject(shell), status: "failed", error: { code: e.code, message: e.message } } });
      sse.end("");
    }
  });

  return router;
}
