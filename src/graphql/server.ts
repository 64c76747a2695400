import type { Server as HttpServer } from "node:http";
import type { Server as HttpsServer } from "node:https";
import { ApolloServer } from "@apollo/server";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type Router } from "express";
import depthLimit from "graphql-depth-limit";
import { GraphQLError, parse, specifiedRules, validate, type GraphQLSchema, type ValidationRule } from "graphql";
import { WebSocketServer, type WebSocket } from "ws";
import { useServer } from "graphql-ws/use/ws";
import { REQUEST_ID_HEADER, requestIdOf } from "../infra/request-id.js";
import type { Runtime } from "../runtime/runtime.js";
import { AppError } from "../errors/app-error.js";
import { jsonTooDeep, MAX_JSON_DEPTH } from "../infra/json.js";
import { buildContext, type GraphQLAuth, type GraphQLContext } from "./context.js";
import { costLimitError } from "./cost.js";
import { formatGraphQLError } from "./errors.js";

export const MAX_QUERY_DEPTH = 10;
/** graphql-ws close code for a socket whose admin token was revoked (the protocol's Forbidden). */
export const TOKEN_REVOKED_CLOSE = { code: 4403, reason: "Token revoked" } as const;
/**
 * graphql-ws close code for a socket over GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN: the protocol's 4429,
 * which graphql-ws clients take as fatal (no automatic retry): close other sockets first.
 */
export const TOO_MANY_SOCKETS_CLOSE = 4429;
/** The error code of an operation over GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET (the socket stays open). */
export const TOO_MANY_SUBSCRIPTIONS = "TOO_MANY_SUBSCRIPTIONS";
const depthRule = depthLimit(MAX_QUERY_DEPTH);
/**
 * graphql-depth-limit follows fragment spreads recursively when the rule is created, so a fragment
 * that spreads itself (`fragment F on X { ...F }`) overflows the stack before graphql's own
 * NoFragmentCycles rule can report it; that must be a validation error, not a 500.
 */
const boundedDepthRule: ValidationRule = (context) => {
  try {
    return depthRule(context);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    context.reportError(new GraphQLError(`The operation nests deeper than ${MAX_QUERY_DEPTH} levels or its fragments spread each other in a cycle`));
    return {};
  }
};
const validationRules: ValidationRule[] = [boundedDepthRule];

export interface MountedGraphQL {
  router: Router;
  /** Stops accepting subscriptions and closes open sockets. */
  close(): Promise<void>;
}

/**
 * GraphQL over HTTP (Apollo Server 5) and graphql-ws on the same path and server. Both share the
 * schema, the auth (Bearer admin token; `connectionParams.authorization` on sockets), the depth
 * and cost limits and the error formatting.
 */
export async function mountGraphQL(runtime: Runtime, schema: GraphQLSchema, httpServer: HttpServer | HttpsServer, auth: GraphQLAuth): Promise<MountedGraphQL> {
  const formatError = formatGraphQLError(runtime.log);
  const limits = runtime.config.graphqlWs;
  // maxPayload: ws refuses a bigger message (close 1009) before buffering it, connection_init included.
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: limits.maxPayloadBytes });
  // An oversized message: ws has already closed the socket with 1009 and then emits the error, which
  // graphql-ws's adapter would print with console.error — one stderr line per hostile frame. It is
  // expected, not an internal error: noted at debug level instead. (Registered before useServer's listener.)
  wsServer.on("connection", (socket) => {
    const emit = socket.emit.bind(socket);
    const quietOversized = ((event: string | symbol, ...args: unknown[]) => {
      if (event === "error" && (args[0] as { code?: string } | undefined)?.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") {
        runtime.log.debug({ limit: limits.maxPayloadBytes }, "graphql-ws message over GRAPHQL_WS_MAX_PAYLOAD_BYTES refused (1009)");
        return true;
      }
      return emit(event, ...args);
    }) as typeof socket.emit;
    socket.emit = quietOversized;
  });
  // The upgrade answer bypasses Express: it gets its x-request-id here.
  wsServer.on("headers", (headers, req) => headers.push(`${REQUEST_ID_HEADER}: ${requestIdOf(req.headers)}`));
  // Open sockets by admin token id (the operator's under one key): a revocation (announced by
  // whichever instance made it) closes them, and a token has at most maxSocketsPerToken of them.
  const socketsByToken = new Map<string, Set<WebSocket>>();
  const socketKey = (principal: GraphQLContext["principal"] | undefined) => (principal?.kind === "admin" ? principal.tokenId : principal ? "operator" : undefined);
  const revoked = (tokenId: string) => {
    for (const socket of socketsByToken.get(tokenId) ?? []) socket.close(TOKEN_REVOKED_CLOSE.code, TOKEN_REVOKED_CLOSE.reason);
    socketsByToken.delete(tokenId);
  };
  const stopListening = await runtime.events.subscribe(auth.revokedTokenChannel, revoked);
  // A revocation committed while the listener was reconnecting sent a NOTIFY nobody heard: once
  // it is back, check the tokens of the open sockets (as job events replay what changed meanwhile).
  const stopReplay = runtime.events.onReconnect(() => {
    for (const tokenId of [...socketsByToken.keys()]) {
      auth
        .tokenExists(tokenId)
        .then((exists) => exists || revoked(tokenId))
        .catch((err) => runtime.log.warn({ err }, "could not re-check an admin token after the listener reconnected"));
    }
  });
  const wsCleanup = useServer<{ authorization?: string }, { gql?: GraphQLContext; socket: WebSocket }>(
    {
      schema,
      validate: (s, doc) => validate(s, doc, [...specifiedRules, ...validationRules]),
      onConnect: async (ctx) => {
        const authorization = ctx.connectionParams?.authorization;
        try {
          ctx.extra.gql = await buildContext(runtime, auth, typeof authorization === "string" ? authorization : undefined);
          const key = socketKey(ctx.extra.gql.principal)!;
          const set = socketsByToken.get(key) ?? new Set();
          if (set.size >= limits.maxSocketsPerToken) {
            ctx.extra.socket.close(TOO_MANY_SOCKETS_CLOSE, `Too many sockets for this token (GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN=${limits.maxSocketsPerToken})`);
            return false; // graphql-ws's own 4403 then finds the socket closing already
          }
          set.add(ctx.extra.socket);
          socketsByToken.set(key, set);
          return true;
        } catch {
          return false; // graphql-ws closes with 4403 Forbidden
        }
      },
      onClose: (ctx) => {
        const key = socketKey(ctx.extra.gql?.principal);
        const set = key === undefined ? undefined : socketsByToken.get(key);
        set?.delete(ctx.extra.socket);
        if (set?.size === 0) socketsByToken.delete(key!);
      },
      onSubscribe: async (ctx, _id, payload) => {
        // graphql-ws registers the operation before this hook: the count includes it.
        if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptionsPerSocket) {
          return [new GraphQLError(`Too many operations on this socket (GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET=${limits.maxSubscriptionsPerSocket}): complete one first`, { extensions: { code: TOO_MANY_SUBSCRIPTIONS } })];
        }
        // Belt and braces for a missed NOTIFY: a new operation on a revoked token's socket closes it.
        const principal = ctx.extra.gql?.principal;
        if (principal?.kind === "admin" && !(await auth.tokenExists(principal.tokenId))) {
          ctx.extra.socket.close(TOKEN_REVOKED_CLOSE.code, TOKEN_REVOKED_CLOSE.reason);
          return [new GraphQLError("The admin token was revoked", { extensions: { code: "UNAUTHENTICATED" } })];
        }
        let doc;
        try {
          doc = parse(payload.query);
        } catch {
          return; // graphql-ws reports the syntax error itself
        }
        const tooCostly = costLimitError(schema, runtime.config, doc, payload.variables ?? undefined, payload.operationName);
        if (!tooCostly) return undefined;
        const { http: _http, ...extensions } = tooCostly.extensions; // an HTTP status means nothing on a socket
        return [new GraphQLError(tooCostly.message, { extensions })];
      },
      context: (ctx) => ({ ...ctx.extra.gql!, em: runtime.orm.em.fork() }),
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((e) => new GraphQLError(formatError(e.toJSON(), e).message, { extensions: formatError(e.toJSON(), e).extensions })),
    },
    wsServer,
  );

  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    validationRules,
    formatError,
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false, // shutdown order is ours: drain HTTP, stop the worker, then the databases
    introspection: true,
    plugins: [
      {
        async requestDidStart() {
          return {
            async didResolveOperation({ request, document }) {
              const tooCostly = costLimitError(schema, runtime.config, document, request.variables, request.operationName);
              if (tooCostly) throw tooCostly;
            },
          };
        },
      },
    ],
  });
  await apollo.start();

  const router = express.Router();
  router.use(
    "/graphql",
    express.json({
      limit: "2mb",
      // Variables nested thousands deep overflow the stack in coercion and serialization: refuse them first.
      verify: (_req, _res, buf) => {
        if (jsonTooDeep(buf.toString("utf8"))) throw new AppError("invalid_json", `JSON nests arrays/objects deeper than ${MAX_JSON_DEPTH} levels`);
      },
    }),
    expressMiddleware(apollo, {
      context: async ({ req }) => buildContext(runtime, auth, req.headers.authorization),
    }),
  );
  return {
    router,
    async close() {
      stopListening();
      stopReplay();
      await apollo.stop();
      await wsCleanup.dispose();
      await new Promise<void>((r) => wsServer.close(() => r()));
    },
  };
}
