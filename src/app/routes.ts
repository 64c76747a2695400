import type { RouteModule } from "../http/server.js";
import { healthRoutes } from "../health/routes.js";
import { chatRoutes } from "../chat/routes.js";
import { webhookRoutes } from "../webhooks/routes.js";
import { jobRoutes } from "../webhooks/job-routes.js";
import { consoleRoutes } from "../console/routes.js";
import { a2aRoutes } from "../a2a/routes.js";
import { mcpRoutes } from "../mcp/routes.js";
import { inputRequestRoutes } from "../input-requests/routes.js";
import { oauthRoutes } from "../oauth/routes.js";

/**
 * The REST capabilities the API serves, in mount order (GraphQL is mounted before them). A2A is
 * mounted under its own prefix early: its calls skip the other modules' routes (measured: about
 * a third of what an A2A call allocated beyond a chat completion was route matching), and the
 * others' requests pass one prefix check. The web console comes last: it never shadows the API.
 */
export const apiRoutes: RouteModule[] = [healthRoutes, a2aRoutes, oauthRoutes, chatRoutes, webhookRoutes, jobRoutes, inputRequestRoutes, mcpRoutes, consoleRoutes];
