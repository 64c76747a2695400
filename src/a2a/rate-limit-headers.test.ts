import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RateLimitState } from "../chat/rate-limit.js";
import { noteRateLimit, rateLimitHeadersOnWrite, type RateLimitNote } from "./rate-limit-headers.js";

const WINDOW: RateLimitState = { limit: 60, remaining: 41, resetMs: 12_300 };

/** Each path answers in one of the ways a call's response is written: the route's JSON, an SSE stream, an error's own headers, a note after the head. */
const server = http.createServer((req, res) => {
  const state: RateLimitNote = {};
  rateLimitHeadersOnWrite(res, state);
  const note = noteRateLimit(state);
  if (req.url === "/json") {
    note(WINDOW);
    res.setHeader("content-type", "application/json");
    res.end("{}");
  } else if (req.url === "/stream") {
    note(WINDOW);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    res.end("data: {}\n\n");
  } else if (req.url === "/refused") {
    note({ ...WINDOW, remaining: 0 });
    res.setHeader("x-ratelimit-reset-requests", "60s");
    res.statusCode = 429;
    res.end();
  } else if (req.url === "/late") {
    res.flushHeaders();
    note(WINDOW);
    res.end();
  } else res.end();
});
let base = "";
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("a call's rate-limit headers", () => {
  it("carry the noted window on a JSON answer and on a stream's head", async () => {
    for (const path of ["/json", "/stream"]) {
      const res = await fetch(base + path);
      await res.text();
      expect(res.headers.get("x-ratelimit-limit-requests"), path).toBe("60");
      expect(res.headers.get("x-ratelimit-remaining-requests"), path).toBe("41");
      expect(res.headers.get("x-ratelimit-reset-requests"), path).toBe("13s");
    }
  });

  it("keep a header the answer set itself (a 429's own)", async () => {
    const res = await fetch(base + "/refused");
    expect(res.status).toBe(429);
    expect(res.headers.get("x-ratelimit-reset-requests")).toBe("60s");
    expect(res.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  });

  it("are absent when nothing was counted, or the window came after the head", async () => {
    for (const path of ["/none", "/late"]) {
      const res = await fetch(base + path);
      await res.text();
      expect(res.headers.get("x-ratelimit-limit-requests"), path).toBeNull();
    }
  });

  it("are noted on the state alone: the note holds nothing of the response", () => {
    const state: RateLimitNote = {};
    noteRateLimit(state)(WINDOW);
    expect(state).toEqual({ rateLimit: WINDOW });
  });
});
