import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { readFileSync } from "node:fs";
// The module objects, not named imports: tracing instruments `http.request` / `https.request` on
// them, so a call shows in the caller's trace (src/telemetry scrubs the URL).
import http, { type ClientRequest, type IncomingMessage, type RequestOptions } from "node:http";
import https from "node:https";
import { isIP, type Socket } from "node:net";
import { rootCertificates } from "node:tls";
import type { Config } from "../config/config.js";
import { addressMatcher, classifyAddress } from "./address.js";

/**
 * The one way the service opens a connection to a URL someone else chose (`ctx.fetch`, outbound
 * deliveries): the address check runs inside the socket's own `lookup`, on the addresses the
 * connection is made to, so a name that resolves differently the second time (DNS rebinding) is
 * checked on the answer actually used; IP literals are checked before connecting. One request per
 * call, no redirects (a caller that follows them calls again with the next URL).
 */

/** A call the policy refused or that failed on the network; the message is safe to show its owner. */
export class EgressError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
    this.name = "EgressError";
  }
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface OnceOptions {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Epoch ms by which the whole exchange (connect, send, headers, body) must be over. */
  deadline: number;
  /** Epoch ms by which the connection (TLS included) must be up; default: the deadline. */
  connectDeadline?: number;
  maxResponseBytes: number;
  /** `fail`: a larger body is an error; `truncate`: the read stops there and the answer stands. */
  overflow: "fail" | "truncate";
  /** How messages name the caller (`ctx.fetch`, `callback`). */
  label: string;
  /** The time limit as the caller states it in a timeout's message. */
  timeoutMs: number;
}

export interface OnceResponse extends EgressResponse {
  /** Body bytes read (at most maxResponseBytes when truncated). */
  bytes: number;
  truncated: boolean;
}

export interface Connector {
  /** Throws EgressError(refused) when `address` may not be reached for `host`. */
  check(host: string, address: string, plainHttp: boolean, label: string): void;
  /** Whether `http://` may be used at all (development: EGRESS_ALLOW_PRIVATE, loopback only). */
  allowsPlainHttp: boolean;
  once(url: URL, options: OnceOptions): Promise<OnceResponse>;
}

export function createConnector(config: Config["egress"]): Connector {
  const exempt = addressMatcher(config.allowAddresses);
  const ca = config.caFile ? [...rootCertificates, readFileSync(config.caFile, "utf8")] : undefined;

  const check = (host: string, address: string, plainHttp: boolean, label: string): void => {
    const verdict = classifyAddress(address);
    if (plainHttp) {
      // http:// is a development exception: loopback only, and only with EGRESS_ALLOW_PRIVATE.
      if (config.allowPrivate && !verdict.ok && verdict.range === "loopback") return;
      throw new EgressError(`${label} refused: http:// is allowed only to loopback with EGRESS_ALLOW_PRIVATE (${host} resolves to ${address})`, true);
    }
    if (config.allowPrivate || exempt(address)) return;
    if (!verdict.ok) throw new EgressError(`${label} refused: ${host} resolves to ${address}, a ${verdict.range} address`, true);
  };

  // The socket's resolver: EGRESS_RESOLVE answers first (tests, dev), else the system's.
  const lookupFor = (plainHttp: boolean, label: string) => (hostname: string, options: { all?: boolean }, callback: (...args: any[]) => void): void => {
    const done = (err: Error | null, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      try {
        for (const a of addresses) check(hostname, a.address, plainHttp, label);
      } catch (e) {
        return callback(e);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    const fixed = config.resolve[hostname.toLowerCase()];
    if (fixed) return done(null, [{ address: fixed, family: isIP(fixed) }]);
    dnsLookup(hostname, { all: true }, (err, addresses) => done(err, addresses));
  };

  function once(url: URL, o: OnceOptions): Promise<OnceResponse> {
    return new Promise((resolve, reject) => {
      const plainHttp = url.protocol === "http:";
      const host = url.hostname.replace(/^\[|\]$/g, "");
      try {
        if (!plainHttp && url.protocol !== "https:") throw new EgressError(`${o.label} refused: only https:// URLs are allowed (got ${url.protocol}//${url.host})`, true);
        if (plainHttp && !config.allowPrivate) throw new EgressError(`${o.label} refused: only https:// URLs are allowed (got http://${url.host})`, true);
        if (isIP(host)) check(host, host, plainHttp, o.label);
      } catch (e) {
        return reject(e);
      }
      const left = () => Math.max(1, o.deadline - Date.now());
      const options: RequestOptions & { ca?: string[] } = { method: o.method, headers: o.headers, lookup: lookupFor(plainHttp, o.label) as never, agent: false, timeout: left() };
      if (!plainHttp) options.ca = ca;
      let req: ClientRequest;
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = () => {
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
          resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks).toString("utf8"), bytes: Math.min(size, o.maxResponseBytes), truncated });
        };
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > o.maxResponseBytes) {
            if (o.overflow === "fail") return void req.destroy(new EgressError(`${o.label}: the response from ${url.host} is larger than ${o.maxResponseBytes} bytes`, false));
            // Enough read: keep what fits, stop reading, close the connection, answer with it.
            chunks.push(c.subarray(0, c.length - (size - o.maxResponseBytes)));
            truncated = true;
            res.removeAllListeners("data");
            req.destroy();
            return finish();
          }
          chunks.push(c);
        });
        res.on("end", finish);
        res.on("error", (err) => reject(err instanceof EgressError ? err : new EgressError(`${o.label}: ${url.host}: ${err.message}`, false)));
      };
      req = plainHttp ? http.request(url, options, onResponse) : https.request(url, options, onResponse);
      // One deadline for the whole exchange, not only for idle sockets; a shorter one to connect.
      const timeout = () => req.destroy(new EgressError(`${o.label}: ${url.host} did not answer within ${o.timeoutMs} ms`, false));
      const timer = setTimeout(timeout, left());
      const connectTimer = o.connectDeadline
        ? setTimeout(() => req.destroy(new EgressError(`${o.label}: could not connect to ${url.host} in time`, false)), Math.max(1, o.connectDeadline - Date.now()))
        : undefined;
      // agent: false, so every request has a fresh socket whose handshake is still ahead.
      req.on("socket", (socket: Socket) => socket.once(plainHttp ? "connect" : "secureConnect", () => clearTimeout(connectTimer)));
      req.on("timeout", timeout);
      req.on("close", () => {
        clearTimeout(timer);
        clearTimeout(connectTimer);
      });
      req.on("error", (err) => reject(err instanceof EgressError ? err : new EgressError(`${o.label}: ${url.host}: ${err.message}`, false)));
      req.end(o.body);
    });
  }

  return { check, allowsPlainHttp: config.allowPrivate, once };
}
