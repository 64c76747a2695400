import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { AppError } from "../errors/app-error.js";

/**
 * The upstream HTTP call: bounded retries with backoff for connect errors, 429 and 5xx, a
 * per-attempt timeout, and mapping of what is left to 502/503/504. Retrying is only safe before
 * anything reached the client, so `canRetry()` is asked before each new attempt.
 */
export interface UpstreamCall {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  maxRetries: number;
  signal?: AbortSignal;
  /** Called with a successful response; its errors are final unless retryable and `canRetry()`. */
  handle: (res: UpstreamResponse, signal: AbortSignal) => Promise<void>;
  canRetry: () => boolean;
  observe?: (outcome: string, seconds: number) => void;
}

class RetryableStatus extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`upstream answered ${status}`);
  }
}

export class ClientAborted extends Error {
  constructor() {
    super("client aborted");
    this.name = "ClientAborted";
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(new ClientAborted());
      },
      { once: true },
    );
  });

/**
 * The part of a fetch Response the providers use, over node:http. Upstream calls go through
 * node:http with keep-alive agents rather than fetch: the same pooled, reused connections with
 * much less work per request (no WHATWG streams, Request/Response/Headers objects).
 */
export interface UpstreamResponse {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** The body as it arrives; `cancel()` discards the rest (the connection stays reusable). */
  body: AsyncIterable<Uint8Array> & { cancel(): Promise<void> };
}

const agents = {
  "http:": new http.Agent({ keepAlive: true, scheduling: "lifo" }),
  "https:": new https.Agent({ keepAlive: true, scheduling: "lifo" }),
};

/**
 * The body's chunks as they arrive. A consumer that stops early (e.g. at `data: [DONE]`, before
 * the response's end was read) leaves the rest to be drained rather than destroying the
 * response, which would also destroy the keep-alive connection (Readable's own async iterator
 * does that).
 */
async function* chunksOf(res: IncomingMessage): AsyncGenerator<Uint8Array> {
  const queue: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (c: Buffer) => {
    queue.push(c);
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const onError = (err: Error) => {
    failure ??= err;
    wake?.();
  };
  const onClose = () => {
    if (!ended) failure ??= new Error("upstream response closed before its end");
    wake?.();
  };
  res.on("data", onData);
  res.once("end", onEnd);
  res.on("error", onError);
  res.once("close", onClose);
  try {
    for (;;) {
      if (queue.length) {
        yield queue.shift()!;
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    res.off("data", onData);
    res.off("end", onEnd);
    res.off("close", onClose);
    if (!ended && !failure) res.resume(); // drain the rest; the connection goes back to the pool
  }
}

function wrap(res: IncomingMessage): UpstreamResponse {
  const status = res.statusCode ?? 0;
  const body = {
    [Symbol.asyncIterator]: () => chunksOf(res),
    cancel: async () => {
      res.resume();
    },
  };
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get: (name) => {
        const v = res.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
      },
    },
    text: async () => {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      return chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
    },
    body,
  };
}

function post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const agent = agents[u.protocol as keyof typeof agents];
    if (!agent) return reject(new TypeError(`unsupported upstream protocol ${u.protocol}`));
    const req = (u.protocol === "https:" ? https : http).request(
      u,
      { method: "POST", agent, signal, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (res) => resolve(wrap(res)),
    );
    req.on("error", reject);
    req.end(body);
  });
}

function retryAfter(res: UpstreamResponse): number | undefined {
  const v = res.headers.get("retry-after");
  if (!v) return undefined;
  const s = Number(v);
  return Number.isFinite(s) ? s * 1000 : undefined;
}

export async function callUpstream(call: UpstreamCall): Promise<void> {
  let lastError: AppError | undefined;
  for (let attempt = 0; attempt <= call.maxRetries; attempt++) {
    if (attempt > 0) {
      if (!call.canRetry()) break;
      const base = Math.min(2000, 100 * 2 ** (attempt - 1));
      await sleep(base / 2 + Math.random() * base, call.signal);
    }
    if (call.signal?.aborted) throw new ClientAborted();
    // One controller per attempt, aborted by the attempt's timeout or by the client's signal.
    const ctl = new AbortController();
    const signal = ctl.signal;
    const timeout = { aborted: false };
    const timer = setTimeout(() => {
      timeout.aborted = true;
      ctl.abort();
    }, call.timeoutMs);
    const onClientAbort = () => ctl.abort();
    call.signal?.addEventListener("abort", onClientAbort, { once: true });
    const started = performance.now();
    const observe = (outcome: string) => call.observe?.(outcome, (performance.now() - started) / 1000);
    try {
      const res = await post(call.url, { "content-type": "application/json", ...call.headers }, JSON.stringify(call.body), signal);
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel().catch(() => {});
        throw new RetryableStatus(res.status, retryAfter(res));
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {});
        observe("error");
        // A 4xx from upstream is our request's fault or a config problem: not retryable, and its
        // body (which may echo the prompt) is not passed on.
        throw new AppError("upstream_error", `The ${call.provider} upstream rejected the request (HTTP ${res.status})`, { details: { upstream_status: res.status } });
      }
      await call.handle(res, signal);
      observe("ok");
      return;
    } catch (err) {
      if (call.signal?.aborted) {
        observe("client_abort");
        throw new ClientAborted();
      }
      if (err instanceof AppError) throw err;
      if (timeout.aborted) {
        observe("timeout");
        lastError = new AppError("upstream_timeout", `The ${call.provider} upstream did not answer within ${call.timeoutMs} ms`);
      } else if (err instanceof RetryableStatus) {
        observe(String(err.status));
        lastError =
          err.status === 429 || err.status === 503
            ? new AppError("upstream_unavailable", `The ${call.provider} upstream is overloaded or rate limited (HTTP ${err.status})`)
            : new AppError("upstream_error", `The ${call.provider} upstream failed (HTTP ${err.status})`);
        if (err.retryAfterMs !== undefined && err.retryAfterMs > 5000) break; // not worth waiting for
      } else {
        observe("connect_error");
        lastError = new AppError("upstream_unavailable", `The ${call.provider} upstream is unreachable`);
      }
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onClientAbort);
    }
  }
  throw lastError ?? new AppError("upstream_error", `The ${call.provider} upstream failed`);
}

/** Server-Sent Events from a response body: yields `{ event, data }` per event. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<{ event: string | undefined; data: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let sep: RegExpExecArray | null;
    while ((sep = /\r?\n\r?\n/.exec(buffer))) {
      const raw = buffer.slice(0, sep.index);
      buffer = buffer.slice(sep.index + sep[0].length);
      const parsed = parseEvent(raw);
      if (parsed) yield parsed;
    }
  }
  const tail = parseEvent(buffer + decoder.decode());
  if (tail) yield tail;
}

function parseEvent(raw: string): { event: string | undefined; data: string } | undefined {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of raw.split(/\r?\n/)) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return data.length ? { event, data: data.join("\n") } : undefined;
}

export function parseJson(text: string, provider: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("upstream_error", `The ${provider} upstream sent malformed JSON`);
  }
}
