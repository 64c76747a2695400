import type { ServerResponse } from "node:http";
import { rateLimitHeaders, type RateLimitState } from "../chat/rate-limit.js";

/** What a call notes of its key's rate-limit window, for its response's headers. */
export interface RateLimitNote {
  rateLimit?: RateLimitState;
}

/**
 * The call's `onRateLimit`: notes the window on the call's state. It is made here and returned,
 * never written as a function literal straight into a property: V8 allocates such a literal in
 * the old generation, where, dead or not, it keeps what it closes over through every young
 * collection until the next full one. Made in the route, it closed over the route's scope, and
 * so the response, the request and its body: 6 to 12 kB promoted a call
 * (docs/design/request-path-cpu.md; `npm run lint:closures` finds the pattern).
 */
export function noteRateLimit(state: RateLimitNote): (s: RateLimitState) => void {
  return (s) => {
    state.rateLimit = s;
  };
}

const NOTE = Symbol("rate-limit note");
const WRITE_HEAD = Symbol("writeHead");
type NotedResponse = ServerResponse & { [NOTE]: RateLimitNote; [WRITE_HEAD]: ServerResponse["writeHead"] };

/**
 * Writes the noted window's headers when the response's head is written, whoever writes it (the
 * route, the SDK's router, an error). A header already set (a 429's own) is kept. A window noted
 * after the head was sent is not shown, as before. One `writeHead` serves every response and
 * finds the note through `this`: nothing is made per call.
 */
export function rateLimitHeadersOnWrite(res: ServerResponse, state: RateLimitNote): void {
  const noted = res as NotedResponse;
  noted[NOTE] = state;
  noted[WRITE_HEAD] = res.writeHead;
  res.writeHead = writeHeadWithRateLimit as ServerResponse["writeHead"];
}

function writeHeadWithRateLimit(this: NotedResponse, ...args: Parameters<ServerResponse["writeHead"]>): ServerResponse {
  const s = this[NOTE].rateLimit;
  if (s) {
    const h = rateLimitHeaders(s);
    for (const k in h) if (!this.hasHeader(k)) this.setHeader(k, h[k]!);
  }
  return this[WRITE_HEAD].apply(this, args);
}
