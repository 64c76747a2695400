import { createServer, type Server } from "node:https";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Callback {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Epoch ms when the request arrived. */
  at: number;
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
 * `/redirect…` answers 302; anything else 200 `ok`.
 */
export async function startCallbackReceiver(host: string, tls: { cert: string; key: string }): Promise<CallbackReceiver> {
  const requests: Callback[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer(tls, async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const r: Callback = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
    requests.push(r);
    const seen = requests.filter((q) => q.path === r.path).length;
    const flaky = /^\/flaky(\d+)/.exec(r.path);
    if (flaky) return void res.writeHead(seen <= Number(flaky[1]) ? 500 : 200).end(seen <= Number(flaky[1]) ? "not yet" : "ok");
    if (r.path.startsWith("/fail")) return void res.writeHead(500).end("down");
    if (r.path.startsWith("/redirect")) return void res.writeHead(302, { location: "/ok" }).end();
    if (r.path.startsWith("/hang")) return void open.add(res);
    if (r.path.startsWith("/stream")) {
      open.add(res);
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
