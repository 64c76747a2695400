import type { ServerResponse } from "node:http";
import { rateLimitHeaders, type RateLimitState } from "../chat/rate-limit.js";

/** What a call notes of its key's rate-limit window, for its response's headers. */
export interface RateLimitNote {
  rateLimit?: RateLimitState;
}

/**
 * The call's `onRateLimit`: notes the window on the call's state. It is built here, not in the
 * route, so that it holds the state alone: a closure made in the route shares the route's scope,
 * and with it the response, the request and its body. Young-generation collections find the
 * state still reached (from dead objects already in the old generation), and everything it
 * reached was promoted with it: 6 to 12 kB per call (docs/design/request-path-cpu.md).
 */
export function noteRateLimit(state: RateLimitNote): (s: RateLimitState) => void {
  return (s) => {
    state.rateLimit = s;
  };
}

/**
 * Writes the noted window's headers when the response's head is written, whoever writes it (the
 * route, the SDK's router, an error). A header already set (a 429's own) is kept. A window noted
 * after the head was sent is not shown, as before.
 */
export function rateLimitHeadersOnWrite(res: ServerResponse, state: RateLimitNote): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
    const s = state.rateLimit;
    if (s) {
      const h = rateLimitHeaders(s);
      for (const k in h) if (!this.hasHeader(k)) this.setHeader(k, h[k]!);
    }
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
}
