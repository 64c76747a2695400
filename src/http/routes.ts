import type { RouteModule } from "./server.js";
import { chatRoutes } from "../chat/routes.js";
import { webhookRoutes } from "../webhooks/routes.js";
import { jobRoutes } from "../jobs/routes.js";

/** The REST capabilities the API serves, in mount order. */
export const apiRoutes: RouteModule[] = [chatRoutes, webhookRoutes, jobRoutes];
