import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * SendStreamingMessage's events against an upstream the test steers read by read: the deltas of
 * one upstream read leave as one artifactUpdate, those of separate reads as separate ones.
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
});
