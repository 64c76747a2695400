import { createServer as createHttpServer, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { createServer as createHttpsServer } from "node:https";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import express, { type Router } from "express";
import { errorHandler, notFoundHandler } from "../errors/http.js";
import type { GraphQLSchema } from "graphql";
import type { GraphQLAuth } from "../graphql/context.js";
import { mountGraphQL } from "../graphql/server.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Logger } from "../infra/logger.js";
import { requestId } from "./request-id.js";
import { openApiRoute } from "./openapi.js";

/** How long the answers of cut requests get to leave before the connections are closed. */
const CUT_GRACE_MS = 1000;

export interface ApiServer {
  url: string;
  port: number;
  server: Server;
  /**
   * Graceful: stop accepting, let in-flight requests and streams finish (up to `drainMs`, by
   * default `SHUTDOWN_DRAIN_MS`), cut the work still running (the route modules' `cut`), then close.
   */
  close(drainMs?: number): Promise<void>;
}

/** Capability routers mounted under the API; each capability owns its paths. */
export type RouteModule = (runtime: Runtime) => Router | MountedRoutes;

/**
 * A route module mounted under a path prefix (its routes are relative to it: requests elsewhere
 * pass one prefix check instead of its routes), or with long-lived machinery of its own (a queue,
 * a loop): stopped after the server drained.
 */
export interface MountedRoutes {
  router: Router;
  prefix?: string;
  close?(): Promise<void> | void;
  /**
   * The drain's time is up: end the requests still in flight so that what they hold is settled
   * (a chat turn's hold) and their clients get an answer, before the connections are closed.
   */
  cut?(): Promise<void>;
}

export interface HttpServerOptions {
  port?: number;
  host?: string;
  /** GraphQL (HTTP and graphql-ws on /graphql), mounted before the routes. */
  graphql?: { schema: GraphQLSchema; auth: GraphQLAuth };
  /** Mounted in order after GraphQL. */
  routes?: RouteModule[];
}

/**
 * The HTTP server with the cross-cutting middleware (request id, metrics, request log, error
 * mapping) around what it is given. What the API serves is decided by the composition root
 * (src/app/api.ts); this module knows no capability.
 */
export async function startHttpServer(runtime: Runtime, options: HttpServerOptions = {}): Promise<ApiServer> {
  const { config, log } = runtime;
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  app.set("etag", false);

  const server: Server = config.tls
    ? createHttpsServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) }, app)
    : createHttpServer(app);
  server.keepAliveTimeout = 65_000;
  server.on("clientError", answerMalformed);

  app.use(requestId());
  app.use(runtime.metrics.middleware());
  app.use(requestLog(log));
  const graphql = options.graphql ? await mountGraphQL(runtime, options.graphql.schema, server, options.graphql.auth) : undefined;
  if (graphql) app.use(graphql.router);
  app.use(openApiRoute());
  const closers: (() => Promise<void> | void)[] = [];
  const cutters: (() => Promise<void>)[] = [];
  for (const route of options.routes ?? []) {
    const mounted = route(runtime);
    // An express Router is itself a function; anything else is `{ router, close, cut? }`.
    if (typeof mounted === "function") app.use(mounted);
    else {
      if (mounted.prefix) app.use(mounted.prefix, mounted.router);
      else app.use(mounted.router);
      if (mounted.close) closers.push(() => mounted.close!());
      if (mounted.cut) cutters.push(() => mounted.cut!());
    }
  }
  app.use(notFoundHandler);
  app.use(errorHandler(log));

  const port = options.port ?? config.port;
  const host = options.host ?? config.host;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;
  const scheme = config.tls ? "https" : "http";
  const displayHost = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  // PORT=0 (tests, side-by-side instances) binds a free port: derived URLs must name that port.
  if (!config.publicBaseUrlExplicit) config.publicBaseUrl = `${scheme}://${displayHost}:${actualPort}`;

  let closing: Promise<void> | undefined;
  return {
    url: `${scheme}://${displayHost}:${actualPort}`,
    port: actualPort,
    server,
    close(drainMs = config.shutdownDrainMs) {
      closing ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        await graphql?.close().catch(() => {});
        let timer: NodeJS.Timeout | undefined;
        const drained = await Promise.race([closed.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), drainMs)))]);
        clearTimeout(timer);
        if (!drained) {
          // Time is up: in-flight work is cut and settled (its clients answered 503), then the
          // connections close, those answers given a moment to leave first.
          await Promise.all(cutters.map((cut) => cut().catch((err) => log.warn({ err }, "a route module failed to cut its requests"))));
          server.closeIdleConnections();
          await Promise.race([closed, new Promise((r) => setTimeout(r, CUT_GRACE_MS).unref())]);
          server.closeAllConnections();
          await closed;
        }
        // After the drain: in-flight requests may still hand work to a module's machinery.
        for (const close of closers) await Promise.resolve(close()).catch((err) => log.warn({ err }, "a route module failed to close"));
      })();
      return closing;
    },
  };
}

/**
 * One log line per finished or aborted request, at `debug` below 400, `info` for 4xx and `error`
 * for 5xx (what pino-http did here before), but with no per-request work unless that
 * level is enabled: no child logger, no header serialisation on the hot path.
 * Never logs bodies or query strings (payloads and tokens live there); credential headers are
 * redacted by the logger.
 */
function requestLog(log: Logger): express.RequestHandler {
  return (req, res, next) => {
    const started = Date.now();
    let logged = false;
    const done = (err?: unknown) => {
      if (logged) return;
      logged = true;
      const aborted = !res.writableEnded;
      const level = err || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug";
      if (!log.isLevelEnabled(level)) return;
      log[level](
        {
          requestId: res.locals.requestId as string | undefined,
          req: { method: req.method, url: String(req.originalUrl ?? req.url).split("?")[0], headers: req.headers },
          res: { statusCode: res.statusCode },
          responseTime: Date.now() - started,
          ...(err ? { err } : {}),
        },
        aborted ? "request aborted" : err || res.statusCode >= 500 ? "request errored" : "request completed",
      );
    };
    // A response always emits "close", after "finish" when it finished (so no "finish" listener).
    res.once("close", done);
    res.once("error", done);
    next();
  };
}

/**
 * Requests Node's HTTP parser refuses (bad Content-Length, broken chunking, oversized headers,
 * garbage request lines) never reach Express; answer them like every other error, with the
 * documented JSON envelope, instead of Node's bare status line.
 */
function answerMalformed(err: NodeJS.ErrnoException, socket: Duplex): void {
  const [status, code, message] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "invalid_request_error", "Request headers are too large"]
      : err.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
        ? [413, "payload_too_large", "Chunk extensions are too large"]
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "invalid_request_error", "The request was not received in time"]
          : [400, "invalid_request_error", "Malformed HTTP request"];
  // Answer unless a response is already under way on this socket (Node documents `_httpMessage`
  // for this check); a keep-alive socket that finished earlier responses may still answer.
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  // The path may not even have been parsed: a body that fits both documented shapes (REST and OpenAI's).
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", code, param: null } });
  const reason = { 400: "Bad Request", 408: "Request Timeout", 413: "Content Too Large", 431: "Request Header Fields Too Large" }[status];
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  // Keep reading what the client is still sending (a long header it has not finished), so the
  // close is not a reset that throws the answer away; the client closes once it has read it.
  socket.resume();
  setTimeout(() => socket.destroy(), 2000).unref();
}
