import { z } from "zod";
import { area, variable } from "../variable.js";

/** The configuration variables of the area "GraphQL, A2A and OAuth". */
export const protocolsArea = area("GraphQL, A2A and OAuth", "Limits of the management API and of the agent protocols.", {
  GRAPHQL_MAX_COST: variable(z.coerce.number().int().min(100).max(10_000_000).default(20_000), "Largest cost of one GraphQL operation: 1 per field, a large field 1 per 16 KiB of its maximum size, a connection's fields once per row asked for (`first`, default 50); beyond it the operation is refused with `QUERY_TOO_COSTLY`"),
  GRAPHQL_WS_MAX_PAYLOAD_BYTES: variable(z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(256 * 1024), "Largest graphql-ws message; a bigger one (even before `connection_init`) closes the socket with 1009"),
  GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN: variable(z.coerce.number().int().min(1).max(100_000).default(20), "Open graphql-ws sockets per admin token (the operator token counts as one) on one API instance; the next is closed with 4429"),
  GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET: variable(z.coerce.number().int().min(1).max(100_000).default(50), "Operations running at once on one socket; the next gets the error `TOO_MANY_SUBSCRIPTIONS` (the socket stays open)"),
  A2A_BLOCKING_WAIT_SECONDS: variable(z.coerce.number().int().min(1).max(290).default(240), "How long a blocking A2A `SendMessage` waits for its task's end (at most 290, under the proxy's 300 s timeout); a task still running then is answered as it is (`TASK_STATE_WORKING`, its record written then), and the client follows it with `GetTask` or `SubscribeToTask`"),
  A2A_STREAM_RECORD_AFTER_MS: variable(z.coerce.number().int().min(0).max(10_000).default(5), "A streamed A2A chat task whose upstream has sent no text this long after the turn opened is written on its own, so the client learns its id early; an answer that comes sooner is written once, with the turn's finish"),
  A2A_PUSH_CONFIGS_PER_TASK: variable(z.coerce.number().int().min(1).max(1000).default(10), "Push notification configs one A2A task may have (each one is sent every event of the task); one more `CreateTaskPushNotificationConfig` is refused with Invalid params (-32602) naming the limit"),
  A2A_MAX_STREAMS_PER_KEY: variable(z.coerce.number().int().min(1).max(100_000).default(10), "A2A streams that follow a task (`SubscribeToTask`, `SendStreamingMessage` to an automation agent) open at once per API key on one API instance; the next is refused before it opens: HTTP 429, JSON-RPC `-32000` with code `rate_limit_exceeded` and `Retry-After`"),
  OAUTH_REGISTRATIONS_PER_MINUTE: variable(z.coerce.number().int().min(1).max(1_000_000).default(20), "OAuth dynamic client registrations (`POST /oauth/register`) per client IP per minute, all instances together; more answer 429 `rate_limit_exceeded`"),
  OAUTH_TOKEN_REQUESTS_PER_MINUTE: variable(z.coerce.number().int().min(1).max(1_000_000).default(120), "OAuth token endpoint requests (`POST /oauth/token`) per client IP per minute, all instances together; more answer 429 `rate_limit_exceeded`"),
});
