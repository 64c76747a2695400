import { adminAuth } from "../accounts/principal.js";
import { startHttpServer, type ApiServer, type RouteModule } from "../http/server.js";
import type { Runtime } from "../runtime/runtime.js";
import { apiRoutes } from "./routes.js";
import { buildGraphQLSchema } from "./schema.js";

/** The API: GraphQL with admin-token auth, then the REST routes (`apiRoutes` unless given). */
export async function startApi(runtime: Runtime, options: { port?: number; host?: string; routes?: RouteModule[] } = {}): Promise<ApiServer> {
  const schema = await buildGraphQLSchema();
  return startHttpServer(runtime, { ...options, routes: options.routes ?? apiRoutes, graphql: { schema, auth: adminAuth(runtime) } });
}
