import { connect } from "node:net";

/** What came back on a raw socket within the wait: the status line's code (0 if none) and the text. */
export interface RawAnswer {
  status: number;
  contentType: string;
  body: string;
  closed: boolean;
}

/**
 * Writes `parts` to a fresh TCP connection (with `gapMs` between them, for slow senders), then
 * reads until the server closes or `waitMs` passes, whichever is first; the socket is always
 * destroyed. Bounded by construction: a server that waits for more never stalls the suite.
 */
export function rawExchange(port: number, parts: (string | Uint8Array)[], options: { waitMs?: number; gapMs?: number } = {}): Promise<RawAnswer> {
  const waitMs = options.waitMs ?? 1500;
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    let closed = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      const head = text.split("\r\n\r\n")[0] ?? "";
      const contentType = /\r\ncontent-type:\s*([^\r\n]*)/i.exec(head)?.[1] ?? "";
      let body = text.slice(head.length + 4);
      if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) body = dechunk(body);
      resolve({ status, contentType, body: Buffer.from(body, "latin1").toString("utf8"), closed });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", () => {});
    socket.on("close", () => {
      closed = true;
      finish();
    });
    socket.on("connect", async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
    });
  });
}

function dechunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const m = /^([0-9a-fA-F]+)[^\r\n]*\r\n/.exec(rest);
    if (!m) return out;
    const size = parseInt(m[1]!, 16);
    if (size === 0) return out;
    out += rest.slice(m[0].length, m[0].length + size);
    rest = rest.slice(m[0].length + size + 2);
  }
}
