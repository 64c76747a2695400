import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../errors/app-error.js";
import { callUpstream, ClientAborted, type UpstreamCall } from "./upstream-http.js";

/**
 * The upstream client's request options are parsed once per URL and it watches the abort signal
 * itself (not through http.request's `signal`): these try to break what that must keep — the
 * right path and query per URL, one pooled keep-alive connection, and a stalled or abandoned
 * answer still cut (504 on silence, ClientAborted when the client left).
 */
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function upstream(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  const sockets = new Set<unknown>();
  server.on("connection", (s) => sockets.add(s));
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => sockets.size };
}

function call(url: string, extra: Partial<UpstreamCall> = {}): Promise<string> {
  let text = "";
  return callUpstream({
    provider: "test",
    url,
    headers: { "x-test": "1" },
    body: { hello: "world" },
    timeoutMs: 2000,
    maxRetries: 0,
    canRetry: () => false,
    handle: async (res) => {
      text = await res.text();
    },
    ...extra,
  }).then(() => text);
}

describe("upstream HTTP client", () => {
  it("sends each URL's own path, query and body, over one kept-alive connection per upstream", async () => {
    const a = await upstream((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => res.end(JSON.stringify({ url: req.url, body, len: req.headers["content-length"], type: req.headers["content-type"], x: req.headers["x-test"] })));
    });
    const b = await upstream((req, res) => res.end(`b${req.url}`));
    for (let i = 0; i < 5; i++) {
      const r = JSON.parse(await call(`${a.url}/v1/messages?beta=${i}`));
      expect(r).toEqual({ url: `/v1/messages?beta=${i}`, body: '{"hello":"world"}', len: "17", type: "application/json", x: "1" });
      expect(await call(`${b.url}/other/path`)).toBe("b/other/path");
    }
    expect(a.connections()).toBe(1);
    expect(b.connections()).toBe(1);
  });

  it("answers upstream_timeout when the answer stalls mid-body, and the next call still works", async () => {
    let stall = true;
    const u = await upstream((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      if (stall) res.write('{"partial":');
      else res.end('{"ok":true}');
    });
    const err = await call(u.url, { timeoutMs: 200 }).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("upstream_timeout");
    stall = false;
    expect(await call(u.url)).toBe('{"ok":true}');
  });

  it("throws ClientAborted and closes the upstream request when the client leaves, before or during the answer", async () => {
    let closed = 0;
    const u = await upstream((req, res) => {
      req.socket.on("close", () => closed++);
      if (req.url === "/body") {
        res.writeHead(200);
        res.write("{");
      }
    });
    for (const path of ["/headers", "/body"]) {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      const err = await call(`${u.url}${path}`, { signal: ac.signal, timeoutMs: 10_000 }).catch((e) => e);
      expect(err).toBeInstanceOf(ClientAborted);
    }
    await expect.poll(() => closed).toBe(2);
  });

  it("refuses an unsupported protocol as unreachable, not a crash", async () => {
    const err = await call("ftp://127.0.0.1/x").catch((e) => e);
    expect((err as AppError).code).toBe("upstream_unavailable");
  });
});
