import type { RouteModule } from "./server.js";

/** The REST capabilities the API serves, in mount order. */
export const apiRoutes: RouteModule[] = [];
