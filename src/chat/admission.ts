import type express from "express";
import type { KeyAuthenticator, KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from "./rate-limit.js";

export interface Admitted<T> {
  principal: KeyPrincipal;
  /** Sets the rate-limit headers on the response (passed to the turn, which counts the request). */
  onState: (s: RateLimitState) => void;
  value: T;
}

/**
 * The front door of the chat and responses routes: the key, the rate-limit headers, the
 * request's validation. A request refused before the hold still counts in the key's window (and
 * a 429 wins over a 400); an accepted one is counted by the turn itself, with the hold.
 */
export function admission(runtime: Runtime, keys: KeyAuthenticator) {
  return async <T>(req: express.Request, res: express.Response, validate: (principal: KeyPrincipal) => T | Promise<T>): Promise<Admitted<T>> => {
    const principal = await keys.authenticate(req.get("authorization"), req.get("x-api-key"));
    const onState = (s: RateLimitState) => {
      const h = rateLimitHeaders(s);
      for (const k in h) res.setHeader(k, h[k]!);
    };
    try {
      return { principal, onState, value: await validate(principal) };
    } catch (err) {
      await consumeRateLimit(runtime.pool, principal.keyId, principal.rateLimitPerMinute, onState);
      throw err;
    }
  };
}

export type Admission = ReturnType<typeof admission>;
