import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { ASYNC_COMMIT_CTE } from "../db/statement.js";
import { makeTaskDurable } from "./store.js";

/**
 * SendStreamingMessage's events against an upstream the test steers read by read: the deltas of
 * one upstream read leave as one artifactUpdate, those of separate reads as separate ones; the
 * Task event (the task id) leaves only once the task's record is durable.
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

  /** Starts a stream; `events` yields each SSE event's JSON-RPC result as it arrives. */
  const send = async (text: string) => {
    const r = await fetch(`${app.url}/api/a2a/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } } }),
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
        if (data) yield JSON.parse(data.slice(6)).result;
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
          if (e.artifactUpdate && !e.artifactUpdate.lastChunk) {
            texts.push(e.artifactUpdate.artifact.parts[0].text);
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

  it("the Task event leaves only once the task's record is durable, even when the whole answer came before", async () => {
    reads = [["Hello", " there"]];
    nextRead = async () => {};
    const pool = app.runtime.pool;
    const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let made = 0;
    const spy = vi.spyOn(pool, "query").mockImplementation(((q: unknown, ...rest: unknown[]) => {
      if ((q as { name?: string })?.name === "a2a-task-make-durable") {
        made++;
        return released.then(() => query(q, ...rest));
      }
      return query(q, ...rest);
    }) as typeof pool.query);
    try {
      let answered = false;
      const text = `durable ${crypto.randomUUID()}`;
      const started = send(text).then((events) => {
        answered = true;
        return events;
      });
      // The turn runs to its end (the upstream answered, the finish committed) while the record's flush is held.
      for (let i = 0; i < 300; i++) {
        const { rows } = await query("select count(*)::int as n from a2a_tasks where agent_id = $1 and state = 'completed' and request->'parts'->0->>'text' = $2", [agent, text]) as { rows: { n: number }[] };
        if (made === 1 && rows[0]!.n > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(made).toBe(1);
      expect(answered).toBe(false);
      release();
      const events = await started;
      const all: any[] = [];
      for await (const e of events) all.push(e);
      expect(all[0].task.status.state).toBe("TASK_STATE_WORKING");
      expect(all[1].artifactUpdate.artifact.parts[0].text).toBe("Hello there");
      expect(all.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    } finally {
      release();
      spy.mockRestore();
    }
  });

  it("the statement that makes a stream's task durable flushes the WAL past every commit before it (an asynchronous one included)", async () => {
    const pool = app.runtime.pool;
    for (let i = 0; i < 20; i++) {
      // A commit that writes WAL without waiting for its flush, as the stream's open does.
      await pool.query(`with ${ASYNC_COMMIT_CTE} select txid_current() as xid, (select async_commit from async_commit)`);
      const { rows } = await pool.query<{ lsn: string }>("select pg_current_wal_insert_lsn()::text as lsn");
      await makeTaskDurable(pool, `tsk_probe_${i}`);
      const flushed = await pool.query<{ ok: boolean }>("select pg_current_wal_flush_lsn() >= $1::pg_lsn as ok", [rows[0]!.lsn]);
      expect(flushed.rows[0]!.ok, `round ${i}`).toBe(true);
    }
  });
});
