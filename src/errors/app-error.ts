/**
 * The application's one error type. Services throw it; `http.ts` maps it to a response body once,
 * `graphql.ts` maps it to a GraphQL error once. Anything that is not an AppError is a bug and
 * surfaces as a generic 500 / INTERNAL_SERVER_ERROR with no details.
 */
export const ERROR_CATALOGUE = {
  invalid_request_error: { status: 400, graphql: "BAD_USER_INPUT" },
  invalid_json: { status: 400, graphql: "BAD_USER_INPUT" },
  validation_failed: { status: 400, graphql: "BAD_USER_INPUT" },
  model_not_found: { status: 400, graphql: "BAD_USER_INPUT" },
  invalid_api_key: { status: 401, graphql: "UNAUTHENTICATED" },
  unauthenticated: { status: 401, graphql: "UNAUTHENTICATED" },
  invalid_credentials: { status: 401, graphql: "UNAUTHENTICATED" },
  insufficient_balance: { status: 402, graphql: "INSUFFICIENT_BALANCE" },
  key_spend_limit_exceeded: { status: 402, graphql: "KEY_SPEND_LIMIT_EXCEEDED" },
  forbidden: { status: 403, graphql: "FORBIDDEN" },
  https_required: { status: 403, graphql: "FORBIDDEN" },
  trigger_inactive: { status: 403, graphql: "TRIGGER_INACTIVE" },
  not_found: { status: 404, graphql: "NOT_FOUND" },
  thread_not_found: { status: 404, graphql: "NOT_FOUND" },
  trigger_not_found: { status: 404, graphql: "NOT_FOUND" },
  job_not_found: { status: 404, graphql: "NOT_FOUND" },
  method_not_allowed: { status: 405, graphql: "BAD_REQUEST" },
  thread_busy: { status: 409, graphql: "CONFLICT" },
  job_not_finished: { status: 409, graphql: "CONFLICT" },
  job_finished: { status: 409, graphql: "CONFLICT" },
  input_already_answered: { status: 409, graphql: "CONFLICT" },
  input_not_required: { status: 409, graphql: "CONFLICT" },
  input_request_not_found: { status: 404, graphql: "NOT_FOUND" },
  input_request_expired: { status: 410, graphql: "GONE" },
  payload_too_large: { status: 413, graphql: "BAD_USER_INPUT" },
  unsupported_media_type: { status: 415, graphql: "BAD_REQUEST" },
  rate_limit_exceeded: { status: 429, graphql: "RATE_LIMITED" },
  internal_error: { status: 500, graphql: "INTERNAL_SERVER_ERROR" },
  upstream_error: { status: 502, graphql: "UPSTREAM_ERROR" },
  upstream_unavailable: { status: 503, graphql: "UPSTREAM_ERROR" },
  service_unavailable: { status: 503, graphql: "SERVICE_UNAVAILABLE" },
  upstream_timeout: { status: 504, graphql: "UPSTREAM_ERROR" },
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
