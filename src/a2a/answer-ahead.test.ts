import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCard, Message } from "@a2a-js/sdk";
import { defaultServerCallContextBuilder, JsonRpcTransportHandler, type A2ARequestHandler } from "@a2a-js/sdk/server";
import { restHandler } from "@a2a-js/sdk/server/express";
import { aheadBody, answerOnCommit, sendAhead, type AheadAnswer } from "./answer-ahead.js";
import { toTask } from "./mapping.js";
import type { TaskRow } from "./store.js";

/**
 * A blocking send's answer written when its end commits (answer-ahead.ts) is the SDK's own answer
 * for the same task, byte for byte and header for header, on both bindings; it is written only
 * when the finish stored the end, from the end as stored, and never over an answer under way.
 */

const row = (answer: string, contextId = "thr_1"): TaskRow => ({
  id: "tsk_1",
  contextId,
  kind: "chat",
  state: "completed",
  request: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hello" }] },
  answer,
  error: null,
  result: null,
  payload: null,
  inputRequest: null,
  statusAt: new Date("2026-11-29T19:00:00.123Z"),
  cursorUs: 0,
});
const user = Message.fromJSON({ messageId: "m1", role: "ROLE_USER", parts: [{ text: "hello" }] });
const task = toTask(row("Hello from A"), { user });

/** A stand-in handler whose SendMessage answers `task`: what the SDK writes for it is the reference. */
const handler = {
  getAgentCard: async () =>
    AgentCard.fromJSON({
      supportedInterfaces: [
        { url: "http://x", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: "http://x", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      ],
      capabilities: {},
    }),
  sendMessage: async () => task,
} as unknown as A2ARequestHandler;

describe("a blocking send's answer written ahead", () => {
  let server: Server;
  let base: string;
  /** Each request's answer is written by this, when set (the route under test). */
  let answer: ((res: ServerResponse) => void) | undefined;

  beforeAll(async () => {
    const app = express();
    app.post("/ahead", (_req, res) => answer!(res));
    app.post("/jsonrpc", express.json(), async (req, res) => {
      const context = defaultServerCallContextBuilder({ extensions: undefined, user: { isAuthenticated: true, userName: "k" }, headers: req.headers, requestedVersion: "1.0" });
      res.json(await new JsonRpcTransportHandler(handler).handle(req.body, context));
    });
    app.use("/rest", restHandler({ requestHandler: handler, userBuilder: async () => ({ isAuthenticated: true, userName: "k" }) }));
    server = createServer(app);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const post = async (path: string, body: unknown) => {
    const r = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify(body) });
    return { status: r.status, type: r.headers.get("content-type"), length: r.headers.get("content-length"), body: await r.text() };
  };
  const message = { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hello" }] } };

  it("is the SDK's answer for the same task: JSON-RPC and HTTP+JSON", async () => {
    const sdkRpc = await post("/jsonrpc", { jsonrpc: "2.0", id: 7, method: "SendMessage", params: message });
    answer = (res) => sendAhead({ res, rest: false, rpcId: 7 }, aheadBody({ res, rest: false, rpcId: 7 }, task));
    expect(await post("/ahead", {})).toEqual(sdkRpc);

    const sdkRest = await post("/rest/message:send", message);
    answer = (res) => sendAhead({ res, rest: true }, aheadBody({ res, rest: true }, task));
    expect(await post("/ahead", {})).toEqual(sdkRest);
    expect(sdkRest.status).toBe(200);
    expect(JSON.parse(sdkRest.body).task.artifacts[0].parts[0].text).toBe("Hello from A");
  });

  /** A finish in flight: its statement leaves (`finishing`), then commits or not (`stored`). */
  const finish = () => {
    let left!: () => void;
    let outcome!: (stored: boolean) => void;
    const finishing = new Promise<void>((r) => (left = r));
    const endStored = new Promise<boolean>((r) => (outcome = r));
    return { finishing, endStored, left, outcome };
  };
  /** The answer a call gets when answerOnCommit is given `drive` its finish (undefined: the route's own, "-"). */
  const callWith = async (drive: (f: ReturnType<typeof finish>, end: { row: TaskRow | undefined }, a: AheadAnswer) => Promise<void>) => {
    answer = (res) => {
      const f = finish();
      const end = { row: undefined as TaskRow | undefined };
      const a: AheadAnswer = { res, rest: true };
      answerOnCommit(a, { finishing: f.finishing, endStored: f.endStored, plannedEnd: () => end.row }, { user });
      void drive(f, end, a).then(() => setTimeout(() => res.headersSent || res.end("-"), 20));
    };
    return (await post("/ahead", {})).body;
  };
  const turn = () => new Promise((r) => setImmediate(r));

  it("leaves when the finish commits, built from the end it stores; an end replaced meanwhile is built again", async () => {
    const stored = await callWith(async (f, end) => {
      end.row = row("first");
      f.left();
      await turn();
      await turn();
      f.outcome(true);
    });
    expect(JSON.parse(stored).task.artifacts[0].parts[0].text).toBe("first");

    const replaced = await callWith(async (f, end) => {
      end.row = row("answer", "ctx_client");
      f.left();
      await turn();
      await turn();
      end.row = row("answer", "thr_1");
      f.outcome(true);
    });
    expect(JSON.parse(replaced).task.contextId).toBe("thr_1");
  });

  it("writes nothing when the finish fails or stores no end, or over an answer under way", async () => {
    expect(
      await callWith(async (f, end) => {
        end.row = row("never");
        f.left();
        f.outcome(false);
      }),
    ).toBe("-");
    expect(
      await callWith(async (f) => {
        f.left();
        f.outcome(true);
      }),
    ).toBe("-");
    expect(
      await callWith(async (f, end, a) => {
        end.row = row("late");
        (a.res as ServerResponse).end("route's own");
        f.left();
        f.outcome(true);
      }),
    ).toBe("route's own");
  });
});
