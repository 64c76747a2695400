import express, { type ErrorRequestHandler } from "express";
import { AppError } from "../errors/app-error.js";
import { unavailableError } from "../errors/unavailable.js";
import { errorBody } from "../errors/http.js";
import { KeyAuthenticator } from "../keys/auth.js";
import { checkModelOptions, type ToolCall } from "../providers/index.js";
import { SUPPORTED_MODELS } from "../config/models.js";
import type { RouteModule } from "../http/server.js";
import { chooseModel, executeTurn } from "./engine.js";
import { admission } from "./admission.js";
import { inFlightTurns } from "./in-flight.js";
import { sweepRateLimits } from "./rate-limit.js";
import { startHoldReclaim } from "./reclaim.js";
import { parseChatRequest } from "./request.js";
import { responsesRouter } from "./responses-routes.js";
import { SseResponse, sseData } from "./sse.js";

/** The OpenAI-compatible facade: POST /api/v1/chat/completions, GET /api/v1/models, the Responses API (responses-routes.ts). */

const MODELS_CREATED = 1_735_689_600; // fixed, so the list is stable across instances

function modelObject(id: string) {
  return { id, object: "model", created: MODELS_CREATED, owned_by: id.slice(0, id.indexOf("/")) };
}

const toolCallsOut = (calls: ToolCall[]) => calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));

export const chatRoutes: RouteModule = (runtime) => {
  const router = express.Router();
  const keys = new KeyAuthenticator(runtime);
  const sweep = setInterval(() => sweepRateLimits(runtime.pool).catch(() => {}), 10 * 60_000);
  sweep.unref();
  const stopReclaim = startHoldReclaim(runtime);

  const admit = admission(runtime, keys);
  // Every turn this instance serves, A2A's and MCP's too, so a graceful stop settles each one (in-flight.ts).
  const turns = inFlightTurns(runtime);
  // The models routes have no hold that re-checks the key in the database: look it up fresh.
  const authFresh = (req: express.Request) => keys.authenticate(req.get("authorization"), req.get("x-api-key"), { fresh: true });

  router.get("/api/v1/models", async (req, res) => {
    await authFresh(req);
    res.json({ object: "list", data: SUPPORTED_MODELS.map(modelObject) });
  });

  router.get("/api/v1/models/*id", async (req, res) => {
    await authFresh(req);
    const raw = (req.params as Record<string, string | string[]>).id;
    const id = Array.isArray(raw) ? raw.join("/") : String(raw ?? "");
    if (!(SUPPORTED_MODELS as readonly string[]).includes(id)) throw new AppError("model_not_found", `The model \`${id}\` does not exist`, { param: "model" });
    res.json(modelObject(id));
  });

  router.post(
    "/api/v1/chat/completions",
    express.json({ limit: "4mb", type: () => true }),
    async (req, res) => {
      const { principal, onState, value: chat } = await admit(req, res, (principal) => {
        const chat = parseChatRequest(req.body);
        const model = chooseModel(principal.agent, chat.model);
        checkModelOptions(runtime.config, model, chat, chat.messages, (i, j) => `messages[${i}].content[${j}]`);
        return chat;
      });
      const created = Math.floor(Date.now() / 1000);
      const input = {
        agent: principal.agent,
        keyId: principal.keyId,
        threadId: chat.threadId,
        model: chat.model,
        messages: chat.messages,
        maxTokens: chat.maxTokens,
        options: chat,
        // Counted in the same statement as the hold (new thread) or just before the lease.
        rateLimit: { keyId: principal.keyId, limit: principal.rateLimitPerMinute, onState },
      };

      if (!chat.stream) {
        const r = await turns.run(undefined, (signal) => executeTurn(runtime, input, { signal }));
        res.json({
          id: r.id,
          object: "chat.completion",
          created,
          model: r.model,
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                // OpenAI sends null content beside tool calls when there is no text.
                content: r.toolCalls.length && !r.content ? null : r.content,
                refusal: null,
                ...(r.toolCalls.length ? { tool_calls: toolCallsOut(r.toolCalls) } : {}),
              },
              logprobs: null,
              finish_reason: r.finishReason,
            },
          ],
          usage: r.usage,
          system_fingerprint: null,
          thread_id: r.threadId,
        });
        return;
      }

      const sse = new SseResponse(res);
      let id = "";
      let threadId = "";
      let model = chat.model ?? principal.agent.defaultModel;
      // Every chunk, the usage chunk included, is built here: `choice` null gives `choices: []`.
      const chunk = (choice: { delta: Record<string, unknown>; finish: string | null } | null, usage: unknown = null) =>
        sseData({
          id,
          object: "chat.completion.chunk",
          created,
          model,
          system_fingerprint: null,
          choices: choice ? [{ index: 0, delta: choice.delta, logprobs: null, finish_reason: choice.finish }] : [],
          ...(chat.includeUsage ? { usage } : {}),
          thread_id: threadId,
        });
      const openStream = () => sse.open(() => chunk({ delta: { role: "assistant", content: "" }, finish: null }));
      try {
        const r = await turns.run(sse.abort.signal, (signal) => executeTurn(runtime, input, {
          stream: true,
          signal,
          onStart: (info) => {
            id = info.id;
            threadId = info.threadId;
            model = info.model;
          },
          onDelta: (text) => {
            openStream();
            sse.write(chunk({ delta: { content: text }, finish: null }));
          },
          onToolCall: (d) => {
            openStream();
            // OpenAI's shape: the first piece of a call has id, type and name; later ones only argument fragments.
            const call =
              d.id !== undefined
                ? { index: d.index, id: d.id, type: "function", function: { name: d.name ?? "", arguments: d.arguments } }
                : { index: d.index, function: { arguments: d.arguments } };
            sse.write(chunk({ delta: { tool_calls: [call] }, finish: null }));
          },
        }));
        id = r.id;
        if (r.aborted || sse.gone) return;
        openStream();
        sse.write(chunk({ delta: {}, finish: r.finishReason }));
        if (chat.includeUsage) sse.write(chunk(null, r.usage));
        sse.end("data: [DONE]\n\n");
      } catch (err) {
        if (sse.abort.signal.aborted) return; // the client left; nothing to answer
        if (!sse.opened) throw err;
        // Mid-stream failure: the status is already 200; tell the client in-band, as OpenAI does.
        const appError = err instanceof AppError ? err : (unavailableError(err) ?? new AppError("upstream_error", "The upstream stream failed"));
        sse.end(sseData(errorBody(appError, true)));
      }
    },
  );

  router.use(responsesRouter(runtime, admit, keys, turns));

  // Body-parser failures on this surface answer 400 in the OpenAI envelope (never 413/500 HTML).
  const bodyErrors: ErrorRequestHandler = (err, _req, _res, next) => {
    const type = (err as { type?: string })?.type;
    if (type === "entity.too.large") return next(new AppError("invalid_request_error", "Request body is too large (limit 4 MB)", { param: "body" }));
    if (type === "entity.parse.failed") return next(new AppError("invalid_request_error", "Request body is not valid JSON", { param: "body" }));
    next(err);
  };
  router.use("/api/v1", bodyErrors);
  return {
    router,
    close: () => {
      clearInterval(sweep);
      stopReclaim();
    },
    cut: () => turns.cut(),
  };
};

