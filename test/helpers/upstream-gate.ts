import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A proxy in front of a fake upstream that can park calls: after `hold()`, every call waits (and
 * is counted in `arrived`) until `release()`. Tests use it to stop turns between their hold and
 * their finish, then crash, race or reclaim them there.
 */
export interface UpstreamGate {
  url: string;
  /** Calls parked since the last hold(). */
  readonly arrived: number;
  /** From now on, calls wait at the gate (the count starts again). */
  hold(): void;
  /** Lets every parked call through, and the next ones too. */
  release(): void;
  close(): Promise<void>;
}

export async function startUpstreamGate(
  target: string,
  options: {
    /** Park the answer instead of the call: the fake has answered, the parked turns all get their answers at the same moment. */
    holdAnswers?: boolean;
    /** Called as each call arrives, gated or not. */
    onArrival?: () => void;
  } = {},
): Promise<UpstreamGate> {
  let gated = false;
  let arrived = 0;
  let open: () => void = () => {};
  let opened = Promise.resolve();
  const wait = async () => {
    if (!gated) return;
    arrived++;
    await opened;
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    options.onArrival?.();
    if (!options.holdAnswers) await wait();
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k))) as Record<string, string>;
    const r = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined }).catch(() => undefined);
    if (!r) return void res.destroy();
    const body = Buffer.from(await r.arrayBuffer());
    if (options.holdAnswers) await wait();
    res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const release = () => {
    gated = false;
    open();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get arrived() {
      return arrived;
    },
    hold() {
      arrived = 0;
      opened = new Promise((r) => (open = r));
      gated = true;
    },
    release,
    async close() {
      release();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
