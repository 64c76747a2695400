import type { RouteModule } from "../http/server.js";
import { healthRoutes } from "../health/routes.js";
import { chatRoutes } from "../chat/routes.js";
import { webhookRoutes } from "../webhooks/routes.js";
import { jobRoutes } from "../webhooks/job-routes.js";
import { consoleRoutes } from "../console/routes.js";
import { a2aRoutes } from "../a2a/routes.js";

/**
 * The REST capabilities the API serves, in mount order (GraphQL is mounted before them). The web
 * console comes last: it never shadows the API.
 */
export const apiRoutes: RouteModule[] = [healthRoutes, chatRoutes, webhookRoutes, jobRoutes, a2aRoutes, consoleRoutes];
