import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One agent at the root of a host of its own, as the kit assumes an agent is: it reads the card
 * at the SUT host's `/.well-known/agent-card.json` whatever the SUT URL's path
 * (tck/agent_card_utils.py), and its REST client joins absolute paths (`urljoin(base,
 * "/message:send")`, tck/transport/rest_client.py), which drops the interface URL's path. The
 * gateway serves every agent under a path (docs/design/a2a.md: `<base>` = `/api/a2a/<agent_id>`, REST at
 * `<base>/v1`), so this proxy maps a port's root onto one agent's base, as a reverse proxy giving
 * each agent its own host would: `/.well-known/…` → `<base>/.well-known/…`, `/` → `<base>`
 * (JSON-RPC), anything else → `<base>/v1/…` (HTTP+JSON). The card's URLs are rewritten to the
 * proxy's origin so the kit calls through it. Bodies and SSE streams pass through as they are.
 *
 * One correction, listed in known-kit-bugs.json (`harness`): the kit speaks v1.0 (method names,
 * shapes) but sends no `A2A-Version`, which the spec reads as 0.3; a request without one gets
 * `A2A-Version: 1.0`, the version the kit speaks.
 */
export interface AgentHost {
  url: string;
  close(): Promise<void>;
}

export async function startAgentHost(base: string): Promise<AgentHost> {
  const target = new URL(base);
  let origin = "";
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    const mapped = path.startsWith("/.well-known/") || path === "/" || path.startsWith("/?") ? target.pathname + (path === "/" ? "" : path) : `${target.pathname}/v1${path}`;
    const isCard = req.method === "GET" && path.startsWith("/.well-known/");
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: target.host };
    if (!headers["a2a-version"] && !/[?&]A2A-Version=/i.test(path)) headers["a2a-version"] = "1.0";
    if (isCard) delete headers["if-none-match"];
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: mapped, headers }, (upRes) => {
      if (!isCard || upRes.statusCode !== 200) {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      upRes.on("data", (c: Buffer) => chunks.push(c));
      upRes.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8").split(base).join(origin);
        const { "content-length": _len, etag: _etag, ...rest } = upRes.headers;
        res.writeHead(200, { ...rest, "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    });
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
