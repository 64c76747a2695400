import { Agent, request } from "node:https";

/**
 * An HTTPS client for the balancer (its self-signed certificate as the CA). A request ends in a
 * response, or in `failure` (connection reset, refused, timeout): what a client of a dying
 * instance sees.
 */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}
export type Outcome = Reply | { failure: string };

export function httpsClient(ca: string, maxSockets = 16) {
  const agent = new Agent({ ca, keepAlive: true, maxSockets });
  const send = (url: string, init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {}): Promise<Outcome> =>
    new Promise((resolve) => {
      const req = request(url, { method: init.method ?? "GET", headers: init.headers, agent, timeout: init.timeoutMs ?? 60_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (err) => resolve({ failure: (err as NodeJS.ErrnoException).code ?? err.message }));
        res.on("aborted", () => resolve({ failure: "aborted" }));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (err) => resolve({ failure: (err as NodeJS.ErrnoException).code ?? err.message }));
      req.end(init.body);
    });
  return { send, close: () => agent.destroy() };
}

export type HttpsClient = ReturnType<typeof httpsClient>;

export function isReply(o: Outcome): o is Reply {
  return "status" in o;
}
