import http, { type IncomingMessage, type RequestOptions } from "node:http";
import https from "node:https";
import { urlToHttpOptions } from "node:url";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { AppError } from "../errors/app-error.js";

/**
 * The upstream HTTP call: bounded retries with backoff for connect errors, 429 and 5xx, a
 * per-attempt idle timeout (reset by every byte of the answer, so a long stream is never cut),
 * and mapping of what is left to 502/503/504. Retrying is only safe before anything reached the
 * client, so `canRetry()` is asked before each new attempt. An upstream 4xx is the request's
 * fault: 400 with the provider's own message (credentials removed) and no retry.
 */
export interface UpstreamCall {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Removed from any upstream text passed on to the client. */
  secrets?: string[];
  /** The longest wait for the first byte, or between two bytes, of an answer. */
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
async function* chunksOf(res: IncomingMessage, onActivity: () => void): AsyncGenerator<Uint8Array> {
  const queue: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (c: Buffer) => {
    onActivity();
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

function wrap(res: IncomingMessage, onActivity: () => void): UpstreamResponse {
  const status = res.statusCode ?? 0;
  const body = {
    [Symbol.asyncIterator]: () => chunksOf(res, onActivity),
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
    // Listeners rather than `for await`: the stream's async iterator (and its end-of-stream
    // bookkeeping) cost more per call than reading a short JSON answer does.
    text: () =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let ended = false;
        res.on("data", (c: Buffer) => {
          onActivity();
          chunks.push(c);
        });
        res.once("end", () => {
          ended = true;
          resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"));
        });
        res.once("error", reject);
        res.once("close", () => {
          if (!ended) reject(new Error("upstream response closed before its end"));
        });
      }),
    body,
  };
}

/**
 * Request options per upstream URL, parsed once (a handful of provider endpoints): Node's own
 * URL-to-options conversion, so the request is the one `http.request(url)` would make.
 */
const targets = new Map<string, { module: typeof http | typeof https; options: RequestOptions }>();
const MAX_TARGETS = 1000;

function targetOf(url: string) {
  let t = targets.get(url);
  if (t) return t;
  const u = new URL(url);
  const agent = agents[u.protocol as keyof typeof agents];
  if (!agent) throw new TypeError(`unsupported upstream protocol ${u.protocol}`);
  t = { module: u.protocol === "https:" ? https : http, options: { ...urlToHttpOptions(u), method: "POST", agent } };
  if (targets.size >= MAX_TARGETS) targets.clear();
  targets.set(url, t);
  return t;
}

/**
 * The signal is watched here rather than passed to `http.request` (whose abort-signal hook adds
 * end-of-stream tracking to every request): aborting destroys the request and its response.
 */
function post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal, onActivity: () => void): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    let target;
    try {
      target = targetOf(url);
    } catch (err) {
      return reject(err);
    }
    headers["content-length"] = String(Buffer.byteLength(body));
    const req = target.module.request({ ...target.options, headers }, (res) => {
      onActivity();
      resolve(wrap(res, onActivity));
    });
    const onAbort = () => req.destroy(new Error("upstream call aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    req.once("close", () => signal.removeEventListener("abort", onAbort));
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

/** The provider's error message: Anthropic {error:{message}}, Gemini {error:{message,status}}, OpenAI {error:{message}}. */
function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text);
    const m = body?.error?.message ?? body?.message;
    return typeof m === "string" && m.length > 0 ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An upstream 4xx. 401/403 mean the gateway's own credentials or configuration are wrong: the
 * client cannot fix that (502, no upstream text). Anything else is the request's fault: 400 with
 * the provider's message, credentials removed, and `x-should-retry: false` so SDKs stop retrying.
 */
async function rejection(call: UpstreamCall, res: UpstreamResponse): Promise<AppError> {
  const text = await res.text().catch(() => "");
  if (res.status === 401 || res.status === 403) {
    return new AppError("upstream_error", `The ${call.provider} upstream refused the gateway's credentials (HTTP ${res.status})`, { details: { upstream_status: res.status } });
  }
  let message = providerMessage(text.slice(0, 100_000)) ?? `HTTP ${res.status}`;
  for (const s of call.secrets ?? []) if (s) message = message.split(s).join("[redacted]");
  message = message.replace(/\b(key|token|secret|authorization)=([^&\s]+)/gi, "$1=[redacted]").slice(0, 1000);
  return new AppError("invalid_request_error", `The ${call.provider} upstream rejected the request: ${message}`, {
    headers: { "x-should-retry": "false" },
    details: { upstream_status: res.status },
  });
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
    const fire = () => {
      timeout.aborted = true;
      ctl.abort();
    };
    const timer = setTimeout(fire, call.timeoutMs);
    // Idle, not total: each chunk of the answer restarts the clock.
    const onActivity = () => {
      if (!timeout.aborted) timer.refresh();
    };
    const onClientAbort = () => ctl.abort();
    call.signal?.addEventListener("abort", onClientAbort, { once: true });
    const started = performance.now();
    const observe = (outcome: string) => call.observe?.(outcome, (performance.now() - started) / 1000);
    try {
      const res = await post(call.url, { "content-type": "application/json", ...call.headers }, JSON.stringify(call.body), signal, onActivity);
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel().catch(() => {});
        throw new RetryableStatus(res.status, retryAfter(res));
      }
      if (!res.ok) {
        observe("error");
        throw await rejection(call, res);
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
        lastError = new AppError("upstream_timeout", `The ${call.provider} upstream sent nothing for ${call.timeoutMs} ms`);
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

/**
 * Server-Sent Events from a response body: yields `{ event, data }` per event. Parsed by
 * eventsource-parser (the spec's line, comment and field rules, split chunks, CRLF).
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const decoder = new TextDecoder();
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (events.length) yield events.shift()!;
  }
  // A last event without its blank line still counts (some servers end the body right after it).
  parser.feed(`${decoder.decode()}\n\n`);
  while (events.length) yield events.shift()!;
}

export function parseJson(text: string, provider: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("upstream_error", `The ${provider} upstream sent malformed JSON`);
  }
}
