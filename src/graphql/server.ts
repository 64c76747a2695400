import type { Server as HttpServer } from "node:http";
import type { Server as HttpsServer } from "node:https";
import { ApolloServer } from "@apollo/server";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type Router } from "express";
import depthLimit from "graphql-depth-limit";
import { GraphQLError, specifiedRules, validate, type GraphQLSchema, type ValidationRule } from "graphql";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { Runtime } from "../runtime/runtime.js";
import { AppError } from "../errors/app-error.js";
import { jsonTooDeep, MAX_JSON_DEPTH } from "../infra/json.js";
import { buildContext, type GraphQLContext } from "./context.js";
import { formatGraphQLError } from "./errors.js";

export const MAX_QUERY_DEPTH = 10;
const validationRules: ValidationRule[] = [depthLimit(MAX_QUERY_DEPTH)];

export interface MountedGraphQL {
  router: Router;
  /** Stops accepting subscriptions and closes open sockets. */
  close(): Promise<void>;
}

/**
 * GraphQL over HTTP (Apollo Server 5) and graphql-ws on the same path and server. Both share the
 * schema, the auth (Bearer admin token; `connectionParams.authorization` on sockets), the depth
 * limit and the error formatting.
 */
export async function mountGraphQL(runtime: Runtime, schema: GraphQLSchema, httpServer: HttpServer | HttpsServer): Promise<MountedGraphQL> {
  const formatError = formatGraphQLError(runtime.log);
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql" });
  const wsCleanup = useServer<{ authorization?: string }, { gql?: GraphQLContext }>(
    {
      schema,
      validate: (s, doc) => validate(s, doc, [...specifiedRules, ...validationRules]),
      onConnect: async (ctx) => {
        const auth = ctx.connectionParams?.authorization;
        try {
          ctx.extra.gql = await buildContext(runtime, typeof auth === "string" ? auth : undefined);
          return true;
        } catch {
          return false; // graphql-ws closes with 4403 Forbidden
        }
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
      context: async ({ req }) => buildContext(runtime, req.headers.authorization),
    }),
  );
  return {
    router,
    async close() {
      await apollo.stop();
      await wsCleanup.dispose();
      await new Promise<void>((r) => wsServer.close(() => r()));
    },
  };
}
