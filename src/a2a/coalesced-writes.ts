import type { ServerResponse } from "node:http";

type Chunk = string | Uint8Array;
type Callback = (err?: Error | null) => void;

/**
 * Makes what the A2A SDK's express router writes on a stream leave in one socket write per turn
 * of the event loop, as our own SSE responses do (chat/sse.ts): the router flushes the headers,
 * then writes each event and the end separately, so a turn's end (the task, its artifact and its
 * final status, all ready once its record is durable) cost four or five writes, each a system
 * call and a TCP segment the client wakes for. Writes wait only for the end of the current turn;
 * nothing waits for a later event. A write or end with a callback, or a binary chunk with an
 * encoding, passes through at once, after what is pending.
 */
export function coalesceWrites(res: ServerResponse): void {
  const write = res.write.bind(res) as (chunk: Chunk, cb?: Callback) => boolean;
  const end = res.end.bind(res) as (chunk?: Chunk, cb?: () => void) => ServerResponse;
  const flushHeaders = res.flushHeaders.bind(res);
  let pending: Chunk[] = [];
  let headers = false;
  let scheduled = false;

  const take = (): Chunk | undefined => {
    if (pending.length === 0) return undefined;
    const all = pending.length === 1 ? pending[0]! : pending.every((c) => typeof c === "string") ? pending.join("") : Buffer.concat(pending.map((c) => (typeof c === "string" ? Buffer.from(c) : c)));
    pending = [];
    return all;
  };
  const flush = () => {
    scheduled = false;
    if (res.writableEnded || res.destroyed) return;
    const data = take();
    if (data !== undefined) write(data);
    else if (headers && !res.headersSent) flushHeaders();
    headers = false;
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  res.flushHeaders = () => {
    headers = true;
    schedule();
  };
  res.write = ((chunk: Chunk, ...rest: unknown[]) => {
    if (res.writableEnded || res.destroyed) return false;
    if (rest.length > 0) {
      flush();
      return write(chunk, ...(rest as [Callback]));
    }
    pending.push(chunk);
    schedule();
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: Chunk | (() => void), ...rest: unknown[]) => {
    if (typeof chunk === "function" || rest.length > 0) {
      flush();
      return end(chunk as Chunk, ...(rest as [() => void]));
    }
    if (chunk !== undefined && chunk !== null) pending.push(chunk);
    return end(take());
  }) as typeof res.end;
}
