import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { spyQueries } from "../../test/helpers/pool-spy.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * SendStreamingMessage's events against an upstream the test steers read by read: the deltas of
 * one upstream read leave as one artifactUpdate, those of separate reads as separate ones; the
 * Task event (the task id) leaves only once the task's record is written and durable.
 */
describe("A2A SendStreamingMessage events", () => {
  let app: TestApp;
  let upstream: Server;
  let agent: string;
  let key: string;
  /** What the upstream answers next: the deltas of each read, written as one write per read. */
  let reads: string[][] = [];
  /** Resolved by the test before each read after the first (so reads cannot merge on the way). */
  let nextRead: () => Promise<void> = async () => {};
  let upstreamDone: Promise<void> = Promise.resolve();

  const geminiEvent = (text: string) => `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }], modelVersion: "fake" })}\n\n`;
  const answer = async (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const [i, deltas] of reads.entries()) {
      if (i > 0) await nextRead();
      res.write(deltas.map(geminiEvent).join(""));
    }
    const usage = { promptTokenCount: 11, candidatesTokenCount: 3, totalTokenCount: 14 };
    res.end(`data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP", index: 0 }], usageMetadata: usage, modelVersion: "fake" })}\n\n`);
  };

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let done!: () => void;
      upstreamDone = new Promise((r) => (done = r));
      req.resume();
      req.on("end", () => void answer(res).finally(done));
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    const { adminToken } = await createAccount(app.url, app.operatorToken, "a2a-stream", "10");
    agent = (await gql(app.url, adminToken, `mutation { createAgent(input: { name: "streamer" }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
  });
  afterAll(async () => {
    await app?.close();
    await new Promise((r) => upstream?.close(r));
  });

  /**
   * Starts a stream over JSON-RPC or HTTP+JSON; `events` yields each SSE event's result (the
   * StreamResponse) as it arrives, or `{ error }`.
   */
  const send = async (text: string, binding: "JSON-RPC" | "HTTP+JSON" | "HTTP+JSON v0.3" = "JSON-RPC") => {
    // v0.3's REST path as a v0.3 client joins it to the card's `<base>/v1`, its message shape (proto JSON, `content`), no A2A-Version.
    const legacy = binding === "HTTP+JSON v0.3";
    const message = legacy ? { messageId: crypto.randomUUID(), role: "ROLE_USER", content: [{ text }] } : { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] };
    const url = binding === "JSON-RPC" ? `${app.url}/api/a2a/${agent}` : `${app.url}/api/a2a/${agent}/v1${legacy ? "/v1" : ""}/message:stream`;
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...(legacy ? {} : { "A2A-Version": "1.0" }) },
      body: JSON.stringify(binding === "JSON-RPC" ? { jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message } } : { message }),
    });
    expect(r.status).toBe(200);
    const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    async function* events(): AsyncGenerator<any> {
      for (;;) {
        let end: number;
        while ((end = buffer.indexOf("\n\n")) < 0) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
        }
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split("\n").find((l) => l.startsWith("data: "));
        if (!data) continue;
        const m = JSON.parse(data.slice(6));
        yield binding === "JSON-RPC" ? (m.result ?? { error: m.error }) : m;
      }
    }
    return events();
  };

  it("the deltas of one upstream read leave as one artifactUpdate; separate reads as separate ones, in order (generated reads)", async () => {
    const delta = fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" }).filter((s) => !s.includes("\u0000"));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(delta, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (planned) => {
        reads = planned;
        let sentRead!: () => void;
        nextRead = () => new Promise<void>((r) => (sentRead = r));
        const events = await send("go");
        const first = (await events.next()).value;
        expect(first.task.status.state).toBe("TASK_STATE_WORKING");
        const texts: string[] = [];
        let final: any;
        for await (const e of events) {
          // The last chunk carries the text read with the turn's end, or nothing when that was sent already.
          const text = e.artifactUpdate?.artifact.parts[0].text;
          if (e.artifactUpdate && (!e.artifactUpdate.lastChunk || text !== "")) {
            texts.push(text);
            expect(e.artifactUpdate.append ?? false).toBe(texts.length > 1);
            // This read's event is out: only now does the upstream write its next read.
            sentRead?.();
          }
          if (e.statusUpdate) final = e.statusUpdate.status;
        }
        await upstreamDone;
        expect(texts).toEqual(planned.map((deltas) => deltas.join("")));
        expect(final.state).toBe("TASK_STATE_COMPLETED");
      }),
      { numRuns: 15 },
    );
  });

  /** Spies the pool: the statements' names, and the stream's own write of its task's record held until `release`. */
  const holdRecordWrite = () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const spy = spyQueries(app.runtime.pool, (q) => (q.name === "a2a-insert-working-task" ? released : undefined));
    const names = () => spy.seen.flatMap((q) => (q.name ? [q.name] : []));
    const made = () => names().filter((n) => n === "a2a-insert-working-task").length;
    return { names, made, release, restore: () => (release(), spy.restore()) };
  };
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(what()).toBe(true);
  };
  const all = async (events: AsyncGenerator<any>) => {
    const out: any[] = [];
    for await (const e of events) out.push(e);
    return out;
  };

  it.each(["JSON-RPC", "HTTP+JSON"] as const)("%s: text that arrives before the turn ends: the task's record is written on its own first, and nothing leaves before it", async (binding) => {
    reads = [["Hello"], [" there"]];
    let more!: () => void;
    const upstreamHeld = new Promise<void>((r) => (more = r));
    nextRead = () => upstreamHeld;
    const spy = holdRecordWrite();
    try {
      // The status and headers name nothing: they leave at once.
      const events = await send("durable", binding);
      // The first text came, the turn is not finishing: the record is written on its own, and no event leaves before.
      await until(() => spy.made() === 1);
      const first = events.next();
      expect(await Promise.race([first.then(() => "an event"), new Promise((r) => setTimeout(() => r("nothing"), 100))])).toBe("nothing");
      spy.release();
      expect((await first).value.task.status.state).toBe("TASK_STATE_WORKING");
      expect((await events.next()).value.artifactUpdate.artifact.parts[0].text).toBe("Hello");
      more();
      const rest = await all(events);
      expect(rest[0].artifactUpdate.artifact.parts[0].text).toBe(" there");
      expect(rest.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
      // The finish ended the row the stream wrote.
      expect(spy.names().filter((n) => n.startsWith("thread-finish"))).toEqual(["thread-finish-turn-a2a-task"]);
    } finally {
      more();
      spy.restore();
    }
  });

  it.each(["JSON-RPC", "HTTP+JSON"] as const)("%s: an upstream that sends no text at first: the Task event leaves once the record is written, before any text", async (binding) => {
    reads = [[], ["late"]];
    let more!: () => void;
    const upstreamHeld = new Promise<void>((r) => (more = r));
    nextRead = () => upstreamHeld;
    const spy = holdRecordWrite();
    try {
      const started = send("slow start", binding);
      await until(() => spy.made() === 1);
      spy.release();
      const events = await started;
      expect((await events.next()).value.task.status.state).toBe("TASK_STATE_WORKING");
      more();
      const rest = await all(events);
      expect(rest[0].artifactUpdate.artifact.parts[0].text).toBe("late");
      expect(rest.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    } finally {
      more();
      spy.restore();
    }
  });

  it.each(["JSON-RPC", "HTTP+JSON"] as const)("%s: an answer that comes at once needs no statement of its own: the turn's finish writes the task, ended, and the Task event leaves with the answer", async (binding) => {
    reads = [["Hello", " there"]];
    nextRead = async () => {};
    const spy = holdRecordWrite();
    // "At once" is within the window; on a loaded machine the upstream's round trip alone can take
    // the default 5 ms, so this case widens it (a held record write would otherwise never finish).
    const window = app.runtime.config.a2a.streamRecordAfterMs;
    app.runtime.config.a2a.streamRecordAfterMs = 10_000;
    try {
      for (let i = 0; i < 5; i++) {
        const events = await all(await send(`at once ${i}`, binding));
        // The text read with the end leaves as the artifact's last chunk: three events.
        expect(events.map((e) => Object.keys(e)[0])).toEqual(["task", "artifactUpdate", "statusUpdate"]);
        expect(events[1].artifactUpdate).toMatchObject({ artifact: { parts: [{ text: "Hello there" }] }, lastChunk: true });
        expect(events[1].artifactUpdate.append ?? false).toBe(false);
        expect(events[2].statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
        const { rows } = await app.runtime.pool.query<{ state: string; answer: string }>("select state, answer from a2a_tasks where id = $1", [events[0].task.id]);
        expect(rows).toEqual([{ state: "completed", answer: "Hello there" }]);
      }
      expect(spy.made()).toBe(0);
      expect(spy.names().filter((n) => n.startsWith("thread-finish"))).toEqual(Array(5).fill("thread-finish-turn-a2a-new-task"));
      expect(spy.names().filter((n) => n.startsWith("chat-open")).every((n) => !n.includes("a2a"))).toBe(true);
    } finally {
      app.runtime.config.a2a.streamRecordAfterMs = window;
      spy.restore();
    }
  });

  it.each(["JSON-RPC", "HTTP+JSON"] as const)("%s: the status and headers leave while the finish statement that writes the task runs; its events only after it commits", async (binding) => {
    reads = [["Hello there"]];
    nextRead = async () => {};
    const window = app.runtime.config.a2a.streamRecordAfterMs;
    app.runtime.config.a2a.streamRecordAfterMs = 10_000;
    let commit!: () => void;
    const finishHeld = new Promise<void>((r) => (commit = r));
    let finishes = 0;
    const spy = spyQueries(app.runtime.pool, (q) => (q.name?.startsWith("thread-finish") ? (finishes++, finishHeld) : undefined));
    try {
      const headersFirst = await Promise.race([send("headers first", binding), new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no headers while the finish ran")), 5_000))]);
      expect(finishes).toBe(1);
      const first = headersFirst.next();
      const nothingYet = await Promise.race([first.then(() => "an event"), new Promise((r) => setTimeout(() => r("nothing"), 100))]);
      expect(nothingYet).toBe("nothing");
      commit();
      const events = [(await first).value, ...(await all(headersFirst))];
      expect(events.map((e) => Object.keys(e)[0])).toEqual(["task", "artifactUpdate", "statusUpdate"]);
      expect(events[2].statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    } finally {
      commit();
      app.runtime.config.a2a.streamRecordAfterMs = window;
      spy.restore();
    }
  });

  /** How a finish statement ends without storing the answer, 50 ms after it was sent (the end's events are built meanwhile). */
  const finishFaults = {
    // It finds its thread gone: it refuses.
    "a finish that refuses (the thread deleted meanwhile)": { fault: () => new Promise<void>((r) => setTimeout(r, 50)).then(async () => void (await app.runtime.pool.query("delete from threads where agent_id = $1", [agent]))), message: /deleted/ },
    "a finish statement the database fails": { fault: () => new Promise<void>((_, reject) => setTimeout(() => reject(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" })), 50)), message: undefined },
  };
  it.each((["JSON-RPC", "HTTP+JSON"] as const).flatMap((binding) => Object.keys(finishFaults).map((kind) => [binding, kind as keyof typeof finishFaults] as const)))(
    "%s: the end's events, built while the finish statement runs, leave only if it commits: %s sends the end as stored, FAILED, never COMPLETED",
    async (binding, kind) => {
      const { fault, message } = finishFaults[kind];
      reads = [["Hello there"]];
      nextRead = async () => {};
      const window = app.runtime.config.a2a.streamRecordAfterMs;
      app.runtime.config.a2a.streamRecordAfterMs = 10_000;
      let finishes = 0;
      const spy = spyQueries(app.runtime.pool, (q) => {
        if (!q.name?.startsWith("thread-finish")) return undefined;
        finishes++;
        return fault();
      });
      try {
        const events = await all(await send(kind, binding));
        expect(finishes).toBe(1);
        expect(events[0].task.status.state).toBe("TASK_STATE_WORKING");
        const states = events.flatMap((e) => (e.statusUpdate ? [e.statusUpdate.status.state] : []));
        expect(states).toEqual(["TASK_STATE_FAILED"]);
        if (message) expect(events.at(-1).statusUpdate.status.message.parts[0].text).toMatch(message);
        const { rows } = await app.runtime.pool.query<{ state: string; answer: string | null }>("select state, answer from a2a_tasks where id = $1", [events[0].task.id]);
        expect(rows).toEqual([{ state: "failed", answer: null }]);
      } finally {
        app.runtime.config.a2a.streamRecordAfterMs = window;
        spy.restore();
      }
    },
  );

  it.each(["JSON-RPC", "HTTP+JSON", "HTTP+JSON v0.3"] as const)("%s: a stream whose record could not be written sends no event that names the task: one error event", async (binding) => {
    reads = [["Hello"], [" there"]];
    let more!: () => void;
    const upstreamHeld = new Promise<void>((r) => (more = r));
    nextRead = () => upstreamHeld;
    const spy = spyQueries(app.runtime.pool, (q) => (q.name === "a2a-insert-working-task" ? Object.assign(new Error("connection terminated"), { code: "57P01" }) : undefined));
    const stderr = vi.spyOn(console, "error");
    try {
      const events = await send("no record", binding);
      const got = await all(events).finally(() => more());
      expect(got).toHaveLength(1);
      // The database outage as on every route: 503 with its ErrorInfo, on either binding; nothing printed.
      const unavailable = { reason: "SERVICE_UNAVAILABLE", domain: "agent-gateway", metadata: expect.objectContaining({ status: "503" }) };
      if (binding === "HTTP+JSON v0.3") {
        // v0.3's error shape, as its JSON-RPC binding and its REST answers before a stream give it.
        expect(got[0]).toEqual({ code: -32000, message: expect.any(String), data: { code: "service_unavailable", status: 503 } });
      } else {
        expect(got[0]).toEqual({
          error:
            binding === "JSON-RPC"
              ? expect.objectContaining({ code: expect.any(Number), message: expect.any(String), data: [expect.objectContaining(unavailable)] })
              : { code: 503, status: "UNAVAILABLE", message: expect.any(String), details: [expect.objectContaining(unavailable)] },
        });
      }
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      more();
      stderr.mockRestore();
      spy.restore();
    }
  });
});
