/**
 * The application's one error type. Services throw it; `http.ts` maps it to a response body once,
 * `graphql.ts` maps it to a GraphQL error once. Anything that is not an AppError is a bug and
 * surfaces as a generic 500 / INTERNAL_SERVER_ERROR with no details.
 *
 * Each code's `meaning` and `action` (what the caller should do) are the error reference,
 * docs/reference/errors.md, generated from this table by `npm run docs:write`.
 */
export const ERROR_CATALOGUE = {
  invalid_request_error: { status: 400, graphql: "BAD_USER_INPUT", meaning: "The request is malformed: a field is missing, of the wrong type or out of range (`param` names it), or the body is too large for the chat API.", action: "Fix the field the message names and send again." },
  invalid_json: { status: 400, graphql: "BAD_USER_INPUT", meaning: "The body is not valid JSON, or nests deeper than the gateway accepts.", action: "Send well-formed JSON (check the Content-Type and how the body was built)." },
  validation_failed: { status: 400, graphql: "BAD_USER_INPUT", meaning: "A value is well-formed but not accepted: a GraphQL input out of bounds, an answer that does not match its question's schema.", action: "Read the message (and `details`) for the rule, correct the value; an input request stays open." },
  model_not_found: { status: 400, graphql: "BAD_USER_INPUT", meaning: "The model id is not one the gateway supports.", action: "Use an id from `GET /api/v1/models`." },
  invalid_api_key: { status: 401, graphql: "UNAUTHENTICATED", meaning: "The agent key is missing, unknown, expired, deleted, or not a key of this agent (an admin token where an agent key belongs is refused too).", action: "Send `Authorization: Bearer a2a_\u2026` with a live key of the agent you call; create one with `createApiKey`." },
  unauthenticated: { status: 401, graphql: "UNAUTHENTICATED", meaning: "The GraphQL request carries no valid admin or operator token.", action: "Send `Authorization: Bearer adm_\u2026` (or the operator token for operator mutations)." },
  invalid_credentials: { status: 401, graphql: "UNAUTHENTICATED", meaning: "A webhook or job request's secret or signature does not verify; `reason` says which check failed.", action: "Send the trigger's current secret, or sign the exact raw body with it and the current time." },
  insufficient_balance: { status: 402, graphql: "INSUFFICIENT_BALANCE", meaning: "The account's balance cannot cover the request's hold.", action: "Top the account up (`topUpBalance`) or ask for fewer output tokens." },
  key_spend_limit_exceeded: { status: 402, graphql: "KEY_SPEND_LIMIT_EXCEEDED", meaning: "The key has spent its own spend limit.", action: "Raise or clear the key's limit (`updateApiKey`), or use another key." },
  forbidden: { status: 403, graphql: "FORBIDDEN", meaning: "The token is of the wrong kind for this operation: the operator token for an account's operation, or an admin token for an operator-only one.", action: "Use an admin token for account operations and the operator token for operator ones." },
  https_required: { status: 403, graphql: "FORBIDDEN", meaning: "A webhook, job or answer-URL request came over plain HTTP where HTTPS is required.", action: "Call the `https://` URL; behind a TLS proxy, set `TRUST_PROXY` so the gateway sees the request as secure." },
  trigger_inactive: { status: 403, graphql: "TRIGGER_INACTIVE", meaning: "The trigger is deactivated; the webhook is refused after authentication.", action: "Reactivate the trigger (`updateTrigger`), or use an active one." },
  not_found: { status: 404, graphql: "NOT_FOUND", meaning: "No such route, or a resource that does not exist or is not yours.", action: "Check the path and the id; ids of other accounts answer exactly like unknown ones." },
  thread_not_found: { status: 404, graphql: "NOT_FOUND", meaning: "The `thread_id` names no thread of this agent.", action: "Send a `thread_id` a previous answer of the same agent returned, or none to start a new thread." },
  trigger_not_found: { status: 404, graphql: "NOT_FOUND", meaning: "No trigger with this id.", action: "Check the webhook URL (GraphQL `createTrigger` returns it)." },
  job_not_found: { status: 404, graphql: "NOT_FOUND", meaning: "No job with this id, or the credentials sent do not cover it.", action: "Check the id and send the job's trigger secret or its account's admin token." },
  method_not_allowed: { status: 405, graphql: "BAD_REQUEST", meaning: "The endpoint does not answer this HTTP method (the MCP endpoint answers POST only).", action: "Use the method the `Allow` header lists." },
  thread_busy: { status: 409, graphql: "CONFLICT", meaning: "Another turn of the same thread is in progress.", action: "Wait for it to finish and retry, or continue in a new thread." },
  job_not_finished: { status: 409, graphql: "CONFLICT", meaning: "The job's result was asked for before it finished; `status` says where it is.", action: "Poll `/status` until the job is done or failed, or use a completion callback." },
  job_finished: { status: 409, graphql: "CONFLICT", meaning: "The job already finished, so it cannot be cancelled or answered.", action: "Nothing to do; replay it (`replayJob`) to run it again." },
  input_already_answered: { status: 409, graphql: "CONFLICT", meaning: "The run's question was answered already (an answer URL works once).", action: "Nothing to do; the run has resumed with the first answer." },
  input_not_required: { status: 409, graphql: "CONFLICT", meaning: "The job is not waiting for input.", action: "Check the job's status; only an `input_required` job takes an answer." },
  input_request_not_found: { status: 404, graphql: "NOT_FOUND", meaning: "No open question with this id and token.", action: "Use the exact `answer_url` the run's event carried (the token is part of it)." },
  input_request_expired: { status: 410, graphql: "GONE", meaning: "The question expired, or its run ended, before it was answered.", action: "The run went on without the answer (its script decides how); start a new run if needed." },
  payload_too_large: { status: 413, graphql: "BAD_USER_INPUT", meaning: "The body is larger than the endpoint accepts (1 MiB for webhooks, 64 KiB for answers, 8 MB for A2A).", action: "Send less: put large data behind a URL the script fetches." },
  unsupported_media_type: { status: 415, graphql: "BAD_REQUEST", meaning: "The body is not uncompressed `application/json`.", action: "Send `Content-Type: application/json` without `Content-Encoding`." },
  rate_limit_exceeded: { status: 429, graphql: "RATE_LIMITED", meaning: "Too many requests: the key's requests per minute, OAuth per-IP limits, or open A2A streams per key.", action: "Wait the `Retry-After` seconds; raise the key's `rateLimitPerMinute` if the load is expected." },
  internal_error: { status: 500, graphql: "INTERNAL_SERVER_ERROR", meaning: "A bug: the gateway failed in a way it did not expect; nothing of it is shown.", action: "Retry; if it persists, report it with the response's `x-request-id`." },
  upstream_error: { status: 502, graphql: "UPSTREAM_ERROR", meaning: "The model provider answered with an error.", action: "Retry later; agents with `fallbackModels` try those first." },
  upstream_unavailable: { status: 503, graphql: "UPSTREAM_ERROR", meaning: "The model provider cannot be reached, or its circuit breaker is open after repeated failures.", action: "Retry after `Retry-After`; configure `fallbackModels` to ride through." },
  service_unavailable: { status: 503, graphql: "SERVICE_UNAVAILABLE", meaning: "The gateway cannot serve right now: the database is unreachable, or the instance is stopping.", action: "Retry after `Retry-After` (another instance may take it)." },
  upstream_timeout: { status: 504, graphql: "UPSTREAM_ERROR", meaning: "The model provider did not answer in time (`UPSTREAM_TIMEOUT_MS`).", action: "Retry, ask for less output, or raise the timeout." },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface AppErrorOptions {
  /** The offending request field, reported as OpenAI's `param`. */
  param?: string;
  /** Extra response headers (Retry-After, rate-limit headers). */
  headers?: Record<string, string>;
  /** Extra fields for the body / GraphQL extensions (e.g. the job status on 409). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;
  readonly details: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.status = ERROR_CATALOGUE[code].status;
    this.param = options.param;
    this.headers = options.headers ?? {};
    this.details = options.details ?? {};
  }

  get graphqlCode(): string {
    return ERROR_CATALOGUE[this.code].graphql;
  }
}
