import { createServer, type Server } from "node:https";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Callback {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Epoch ms when the request arrived. */
  at: number;
  /** The status the receiver answered with (undefined: it never answered). */
  status?: number;
}

export interface CallbackReceiver {
  port: number;
  requests: Callback[];
  /** The requests to paths starting with `prefix`. */
  to(prefix: string): Callback[];
  close(): Promise<void>;
}

/**
 * An HTTPS receiver of outbound deliveries, behaving by path:
 * `/flaky<n>…` answers 500 to the first n requests of that path, then 200; `/fail…` always 500;
 * `/hang…` never answers; `/stream…` answers 200 and then sends body bytes for ever;
 * `/redirect…` answers 302; `/random<p>…` answers 500 with probability p % and 200 otherwise;
 * anything else 200 `ok`. `onRequest` sees each request as it arrives (e.g. to verify its
 * signature while its timestamp is fresh).
 */
export async function startCallbackReceiver(host: string, tls: { cert: string; key: string }, options: { onRequest?: (c: Callback) => void } = {}): Promise<CallbackReceiver> {
  const requests: Callback[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer(tls, async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const r: Callback = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
    requests.push(r);
    options.onRequest?.(r);
    const answer = (status: number, body: string) => {
      r.status = status;
      res.writeHead(status).end(body);
    };
    const flaky = /^\/flaky(\d+)/.exec(r.path);
    if (flaky) {
      const seen = requests.filter((q) => q.path === r.path).length;
      return seen <= Number(flaky[1]) ? answer(500, "not yet") : answer(200, "ok");
    }
    const random = /^\/random(\d+)/.exec(r.path);
    if (random) return Math.random() * 100 < Number(random[1]) ? answer(500, "not now") : answer(200, "ok");
    if (r.path.startsWith("/fail")) return answer(500, "down");
    if (r.path.startsWith("/redirect")) {
      r.status = 302;
      return void res.writeHead(302, { location: "/ok" }).end();
    }
    if (r.path.startsWith("/hang")) return void open.add(res);
    if (r.path.startsWith("/stream")) {
      open.add(res);
      r.status = 200;
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(16 * 1024, "x");
      const pump = () => {
        if (res.destroyed || res.writableEnded) return;
        if (res.write(chunk)) setImmediate(pump);
        else res.once("drain", pump);
      };
      res.on("close", () => open.delete(res));
      return pump();
    }
    r.status = 200;
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    to: (prefix) => requests.filter((r) => r.path.startsWith(prefix)),
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
