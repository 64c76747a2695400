import { accountApi } from "./account";
import { adminTokensApi } from "./admin-tokens";
import { agentsApi } from "./agents";
import { jobsApi } from "./jobs";
import { keysApi } from "./keys";
import { schedulesApi } from "./schedules";
import { threadsApi } from "./threads";
import { triggersApi } from "./triggers";
import { usageApi } from "./usage";

/** The console's one door to the server: every operation, grouped by capability in ./<name>.ts. */
export const api = { ...accountApi, ...agentsApi, ...keysApi, ...triggersApi, ...jobsApi, ...threadsApi, ...usageApi, ...adminTokensApi, ...schedulesApi };

export { ApiError, gql, onUnauthenticated } from "./client";
export { followJob } from "./follow-job";
export { DEFAULT_MODEL, MAX_PAYLOAD_BYTES, MODELS } from "./models";
export { clearToken } from "./session";
export { closeSocket, isSocketUp, onSocketState, subscribeJobs } from "./socket";
export { getToken, setToken } from "./token";
export type * from "./types";
