import { createServer, type Server } from "node:https";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpsReceiver {
  port: number;
  requests: Received[];
  /** The first request to a path starting with /hold is answered only when released (later ones at once). */
  held: ServerResponse[];
  releaseHeld(): void;
  /** While true, every request to a path starting with /park is held (released by releaseHeld). */
  parking: boolean;
  close(): Promise<void>;
}

/**
 * A counting HTTPS receiver on a loopback address: echoes what it got as JSON; `/redirect?to=URL`
 * answers 302 to URL; the first `/hold...` request of each path waits until `releaseHeld()`.
 */
export async function startHttpsReceiver(host: string, tls: { cert: string; key: string }): Promise<HttpsReceiver> {
  const requests: Received[] = [];
  const held: ServerResponse[] = [];
  const answer = (res: ServerResponse, r: Received) =>
    res.writeHead(200, { "content-type": "application/json", "x-receiver": "yes" }).end(JSON.stringify({ got: r.body, path: r.path, n: requests.length }));
  const server: Server = createServer(tls, async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const r: Received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
    requests.push(r);
    const url = new URL(r.path, "https://x");
    if (url.pathname === "/redirect") return void res.writeHead(302, { location: url.searchParams.get("to") ?? "/" }).end();
    if ((url.pathname.startsWith("/hold") && requests.filter((q) => q.path === r.path).length === 1) || (url.pathname.startsWith("/park") && receiver.parking)) {
      held.push(res);
      (res as ServerResponse & { received?: Received }).received = r;
      return;
    }
    answer(res, r);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const receiver: HttpsReceiver = {
    port: (server.address() as AddressInfo).port,
    requests,
    held,
    parking: false,
    releaseHeld() {
      for (const res of held.splice(0)) answer(res, (res as ServerResponse & { received: Received }).received);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return receiver;
}
