import { z } from "zod";
import { SUPPORTED_MODELS } from "./models.js";

/**
 * The one place the environment is read and validated. Every process (API, worker, dev launcher,
 * CLI) builds its `Config` here, so a bad value fails the same way everywhere: one message that
 * names the variable, then exit.
 */

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ["true", "false", "1", "0", "yes", "no"].includes(v), {
    message: "must be true or false",
  })
  .transform((v) => v === "true" || v === "1" || v === "yes");

const port = z.coerce
  .number({ message: "must be a port number" })
  .int("must be a whole number")
  .min(0, "must be between 0 and 65535")
  .max(65535, "must be between 0 and 65535");

const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      { message: `must be a URL (${protocols.join(" or ")})` },
    );

const hostPort = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, "must be host:port, e.g. localhost:7233");

const encryptionKey = z
  .string()
  .trim()
  .transform((v, ctx) => {
    const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, "hex") : Buffer.from(v, "base64");
    if (buf.length !== 32) {
      ctx.addIssue({
        code: "custom",
        message: "must be 32 bytes, as 64 hex characters or base64 (openssl rand -base64 32)",
      });
      return z.NEVER;
    }
    return buf;
  });

const jsonRecord = <T extends z.ZodType>(value: T, example: string) =>
  z
    .string()
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: `must be JSON, e.g. ${example}` });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), value));

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: port.default(3000),
  HOST: z.string().trim().min(1).optional(),
  DATA_DIR: z.string().trim().min(1).default("./.data"),
  DATABASE_URL: url(["postgres:", "postgresql:"]).optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  TEMPORAL_ADDRESS: hostPort.optional(),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).default("default"),
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default("agent-gateway"),
  TEMPORAL_CLI_PATH: z.string().trim().min(1).optional(),
  /**
   * Eager workflow start: `auto` starts runs eagerly where the process that starts them also runs
   * the worker of their task queue (`npm start`); `off` always goes through the task queue.
   */
  TEMPORAL_EAGER_START: z.enum(["auto", "off"], { message: "must be auto or off" }).default("auto"),
  OPERATOR_TOKEN: z.string().trim().min(24, "must be at least 24 characters").optional(),
  SECRET_ENCRYPTION_KEY: encryptionKey.optional(),
  PUBLIC_BASE_URL: url(["http:", "https:"]).optional(),
  ALLOW_INSECURE_HTTP: bool.optional(),
  TRUST_PROXY: z.string().trim().optional(),
  TLS_CERT_FILE: z.string().trim().min(1).optional(),
  TLS_KEY_FILE: z.string().trim().min(1).optional(),
  PROVIDER_A_BASE_URL: url(["http:", "https:"]).default("https://generativelanguage.googleapis.com"),
  PROVIDER_A_API_KEY: z.string().trim().min(1).optional(),
  PROVIDER_B_BASE_URL: url(["http:", "https:"]).default("https://api.anthropic.com"),
  PROVIDER_B_API_KEY: z.string().trim().min(1).optional(),
  /** `{"provider_a/model-2.5-flash":"gemini-2.5-flash"}`: upstream model names. */
  MODEL_NAME_MAP: jsonRecord(z.string().min(1), '{"provider_b/model-sonnet-4-6":"claude-sonnet-4-6"}').optional(),
  /** `{"provider_a/model-2.0-flash":{"baseUrl":"http://127.0.0.1:8000/v1","model":"llama3"}}`. */
  OPENAI_COMPATIBLE_ROUTES: jsonRecord(
    z.object({ baseUrl: url(["http:", "https:"]), model: z.string().min(1).optional(), apiKey: z.string().optional() }),
    '{"provider_a/model-2.0-flash":{"baseUrl":"http://127.0.0.1:8000/v1"}}',
  ).optional(),
  /** `{"provider_a/model-2.5-pro":{"input":"1.25","output":"10"}}`: USD per million tokens. */
  MODEL_PRICES: jsonRecord(
    z.object({ input: z.union([z.string(), z.number()]), output: z.union([z.string(), z.number()]) }),
    '{"provider_a/model-2.5-pro":{"input":"1.25","output":"10"}}',
  ).optional(),
  /**
   * How long a graceful stop (SIGTERM, SIGINT) lets in-flight requests finish, chat turns and
   * streams included; then the turns still waiting are cut (their holds released, a stream saved
   * and billed for what it sent) and the connections closed.
   */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  WORKER_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  DEFAULT_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /** How often each API instance settles chat turns whose thread lease expired (a crashed instance's holds). */
  HOLD_RECLAIM_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** How long a blocking A2A SendMessage waits for the task's end before answering with it as it is (under the proxy's 300 s). */
  A2A_BLOCKING_WAIT_SECONDS: z.coerce.number().int().min(1).max(290).default(240),
  A2A_STREAM_RECORD_AFTER_MS: z.coerce.number().int().min(0).max(10_000).default(5),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(120_000),
  UPSTREAM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** Per-model circuit breaker: this many failed calls within the window open it (0: off). */
  MODEL_BREAKER_FAILURES: z.coerce.number().int().min(0).max(1000).default(5),
  MODEL_BREAKER_WINDOW_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** How long an open breaker skips its model before one probe call may try it again. */
  MODEL_BREAKER_COOLDOWN_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
  DEFAULT_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(1).max(1_000_000).default(4096),
  CHAT_MAX_IMAGE_BYTES: z.coerce.number().int().min(1024).max(20 * 1024 * 1024).default(2 * 1024 * 1024),
  /** Operator maximum (and default) of a run's CPU time: time the script itself computes. */
  SCRIPT_CPU_TIME_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  /** Operator maximum (and default) of a run attempt's wall time, awaits included; the workflow's timeouts derive from it. */
  SCRIPT_WALL_TIME_MS: z.coerce.number().int().min(100).max(3_600_000).default(900_000),
  SCRIPT_MEMORY_MB: z.coerce.number().int().min(8).max(1024).default(64),
  /** Journaled calls (ctx.chat, ctx.fetch, ctx.step) per run. */
  SCRIPT_MAX_HOST_CALLS: z.coerce.number().int().min(0).max(10_000).default(100),
  SCRIPT_MAX_RESULT_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  SCRIPT_MAX_LOG_LINES: z.coerce.number().int().min(0).max(100_000).default(1000),
  /** UTF-8 bytes of one ctx.log line, cut inside the sandbox thread before it reaches the worker's main thread. */
  SCRIPT_MAX_LOG_LINE_BYTES: z.coerce.number().int().min(64).max(1024 * 1024).default(4096),
  /** UTF-8 bytes of all ctx.log lines of one run, counted inside the sandbox thread. */
  SCRIPT_MAX_LOG_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(256 * 1024),
  SCRIPT_MAX_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024),
  /** Dev and tests only: let ctx.fetch reach loopback/private addresses. */
  EGRESS_ALLOW_PRIVATE: bool.optional(),
  /** Addresses or CIDRs exempt from the private-range refusal (an internal API the operator trusts; tests). */
  EGRESS_ALLOW_ADDRESSES: z.string().trim().optional(),
  /** `{"api.test":"127.0.0.2"}`: fixed answers instead of DNS (like curl --resolve), for tests and dev. */
  EGRESS_RESOLVE: jsonRecord(z.string().min(1), '{"api.test":"127.0.0.2"}').optional(),
  /** PEM file of extra CAs ctx.fetch trusts (a test or internal CA), on top of the system roots. */
  EGRESS_CA_FILE: z.string().trim().min(1).optional(),
  EGRESS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  EGRESS_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  EGRESS_MAX_REDIRECTS: z.coerce.number().int().min(0).max(20).default(5),
  /** Seconds between the attempts of an outbound delivery (Svix's schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
  OUTBOUND_RETRY_SCHEDULE: z
    .string()
    .trim()
    .default("5,300,1800,7200,18000,36000,36000")
    .transform((v, ctx) => {
      const gaps = v === "" ? [] : v.split(",").map((s) => Number(s.trim()));
      if (gaps.length > 50 || gaps.some((g) => !Number.isFinite(g) || g < 0 || g > 7 * 86_400)) {
        ctx.addIssue({ code: "custom", message: "must be at most 50 comma-separated numbers of seconds, each 0 to 604800, e.g. 5,300,1800" });
        return z.NEVER;
      }
      return gaps;
    }),
  /** One outbound attempt: connecting (and TLS) must finish within the first, the whole answer within the second. */
  OUTBOUND_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  OUTBOUND_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** An outbound attempt reads at most this much of the response body, then stops reading. */
  OUTBOUND_MAX_RESPONSE_BYTES: z.coerce.number().int().min(0).max(1024 * 1024).default(64 * 1024),
  /** Outbound attempts one worker runs at a time (their own activity slots, apart from the runs'). */
  OUTBOUND_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(100),
  /** Outbound attempts of one account in flight at once, across all workers; more wait (a durable timer), so one account's slow targets cannot take every slot. */
  OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).default(10),
  /** Pending deliveries of one job's event (`redeliver`) or of one trigger's test events (`sendTestCallback`); one more is refused. */
  OUTBOUND_MAX_PENDING_RESENDS: z.coerce.number().int().min(1).max(1000).default(5),
  /** A pending delivery with no attempt for the longest gap of the schedule + an attempt's time + this is checked; if its workflow is gone, it is failed. */
  OUTBOUND_STUCK_GRACE_MS: z.coerce.number().int().min(500).max(86_400_000).default(300_000),
  /** Push notification configs one A2A task may have (each is a target of every event); the next create is refused. */
  A2A_PUSH_CONFIGS_PER_TASK: z.coerce.number().int().min(1).max(1000).default(10),
  // 3, not 2: the worker's activity pollers hold two slots while they wait, and an activity is
  // dispatched eagerly (~35 ms sooner; src/temporal/worker.ts) only into a third.
  SANDBOX_POOL_SIZE: z.coerce.number().int().min(1).max(64).default(3),
  /**
   * Runs of one account executing at once, across all workers; more wait queued in their workflow,
   * holding no slot. Unset: a fair share of RUN_SLOTS (a lone account may use every slot; see
   * RUN_SLOTS). Set: a hard cap, whatever the other accounts do.
   */
  RUN_MAX_CONCURRENT_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).optional(),
  /** The run slots of all workers together (the fair share's whole); unset: one worker's, SANDBOX_POOL_SIZE. */
  RUN_SLOTS: z.coerce.number().int().min(1).max(100_000).optional(),
  /** The same for one agent; unset: only the account's limit applies. */
  RUN_MAX_CONCURRENT_PER_AGENT: z.coerce.number().int().min(1).max(100_000).optional(),
  /** Schedules one account may have; one more is BAD_USER_INPUT naming the limit. */
  SCHEDULES_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).default(100),
  /** The shortest `every` a schedule may have (at most 60: a cron fires at most once a minute anyway). */
  SCHEDULE_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(60).default(60),
  /** How long a firing retries creating its job (the database down) before it is recorded as missed. */
  SCHEDULE_FIRING_RETRY_SECONDS: z.coerce.number().int().min(1).max(3600).default(900),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  WORKER_METRICS_PORT: port.optional(),
  /** The most a GraphQL operation may cost: 1 per field, a connection's fields once per row asked for. */
  GRAPHQL_MAX_COST: z.coerce.number().int().min(100).max(10_000_000).default(20_000),
  /** Largest WebSocket message on /graphql (graphql-ws), refused by the WebSocket layer with close 1009, connection_init included. */
  GRAPHQL_WS_MAX_PAYLOAD_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(256 * 1024),
  /** Open graphql-ws sockets of one admin token (or of the operator token) on one API instance; more are closed with 4429. */
  GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Operations running at once on one graphql-ws socket; more get a TOO_MANY_SUBSCRIPTIONS error. */
  GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).max(100_000).default(50),
  /** A2A streams that follow a task (SubscribeToTask, a streamed send to an automation agent) open at once per key on one API instance; more are refused with 429. */
  A2A_MAX_STREAMS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(10),
  /** OAuth dynamic client registrations (POST /oauth/register) per client IP per minute, all instances together; more answer 429. */
  OAUTH_REGISTRATIONS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** OAuth token endpoint requests (POST /oauth/token) per client IP per minute, all instances together; more answer 429. */
  OAUTH_TOKEN_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(120),
  METRICS_JOBS_REFRESH_SECONDS: z.coerce.number().min(1).max(3600).default(15),
  /** Audit entries (or idempotency records) the retention purge handles per transaction: a request waits at most for one batch. */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  // OpenTelemetry's standard names; tracing is on when an endpoint is set (see README, Telemetry).
  OTEL_EXPORTER_OTLP_ENDPOINT: url(["http:", "https:"]).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url(["http:", "https:"]).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(["http/json", "http/protobuf"], { message: "must be http/json or http/protobuf (spans are sent as OTLP/HTTP JSON, which OTLP/HTTP receivers accept on either; gRPC is not supported)" }).optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default("agent-gateway"),
  OTEL_TRACES_EXPORTER: z.enum(["otlp", "none"], { message: "must be otlp or none" }).optional(),
  OTEL_SDK_DISABLED: bool.optional(),
});

type Env = z.infer<typeof envSchema>;

/** Every environment variable the configuration reads (docs and docker-compose are checked against it). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

export interface Config {
  env: "development" | "production" | "test";
  isProduction: boolean;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    cliPath: string | undefined;
    /** `auto`: workflows are started eagerly when this process runs the worker of their task queue. */
    eagerStart: "auto" | "off";
  };
  operatorToken: string;
  secretEncryptionKey: Buffer;
  publicBaseUrl: string;
  /** False when publicBaseUrl was derived from HOST/PORT; the API then uses the port it bound. */
  publicBaseUrlExplicit: boolean;
  allowInsecureHttp: boolean;
  /** Express `trust proxy` value: false, true, a hop count or a list of addresses/subnets. */
  trustProxy: boolean | number | string;
  tls: { certFile: string; keyFile: string } | undefined;
  /** Graceful stop: how long in-flight requests may finish before chat turns are cut and connections closed. */
  shutdownDrainMs: number;
  /** A stopping worker's runs may finish this long; then they are cut and retried on another worker. */
  workerShutdownGraceMs: number;
  providers: {
    a: { baseUrl: string; apiKey: string | undefined };
    b: { baseUrl: string; apiKey: string | undefined };
    modelNameMap: Record<string, string>;
    openAiCompatibleRoutes: Record<string, { baseUrl: string; model?: string; apiKey?: string }>;
    timeoutMs: number;
    maxRetries: number;
    /** Per-model circuit breaker (providers/breaker.ts); failures 0 turns it off. */
    breaker: { failures: number; windowMs: number; cooldownMs: number };
    defaultMaxOutputTokens: number;
    /** Largest decoded image a chat request may carry (a data URL); the JSON body limit (4 MB) caps it too. */
    maxImageBytes: number;
  };
  modelPrices: Record<string, { input: string | number; output: string | number }>;
  defaultRateLimitPerMinute: number;
  /** The period of the reclaim of dead turns' holds (threads/store.ts reclaimExpiredTurns), per API instance. */
  holdReclaimIntervalMs: number;
  /** How long a blocking A2A SendMessage waits for the end; then it answers with the task as it is (a chat task's record written then). */
  a2aBlockingWaitMs: number;
  /** Run limits, the one source for the sandbox and the workflow's timeouts (per agent within these maxima). */
  sandbox: {
    /** CPU time the script itself may use (the sandbox thread's CPU, not time spent awaiting). */
    cpuTimeMs: number;
    /** Wall time of one run, awaits included. */
    wallTimeMs: number;
    memoryMb: number;
    /** ctx.chat, ctx.fetch and ctx.step calls per run. */
    maxHostCalls: number;
    /** ctx.log lines delivered to `onLog` (one more is delivered so the host can mark truncation). */
    maxLogLines: number;
    /** UTF-8 bytes of one ctx.log line and of all of a run's lines; cut in the sandbox thread, marked. */
    maxLogLineBytes: number;
    maxLogBytes: number;
    /** Size of the JSON result. */
    maxResultBytes: number;
    maxScriptBytes: number;
    poolSize: number;
  };
  /** Runs executing at once per account and per agent (all workers together): one tenant cannot take every sandbox. */
  /** Run limits (src/jobs/run-share.ts): a hard cap per account (null: the fair share of `slots`) and per agent (null: none). */
  runConcurrency: { perAccount: number | null; perAgent: number | null; slots: number };
  egress: {
    allowPrivate: boolean;
    allowAddresses: string[];
    resolve: Record<string, string>;
    caFile: string | undefined;
    timeoutMs: number;
    maxResponseBytes: number;
    maxRedirects: number;
  };
  /** Outbound deliveries (DESIGN §17): completion callbacks, A2A push notifications. */
  outbound: {
    /** Seconds between attempts; its length + 1 is the number of attempts. */
    retrySchedule: number[];
    connectTimeoutMs: number;
    timeoutMs: number;
    maxResponseBytes: number;
    concurrency: number;
    maxConcurrentPerAccount: number;
    maxPendingResends: number;
    stuckGraceMs: number;
  };
  /** A2A: push notification configs per task; how long a streamed task's record waits for a fast answer (A2A_STREAM_RECORD_AFTER_MS). */
  a2a: { pushConfigsPerTask: number; streamRecordAfterMs: number };
  logLevel: (typeof LOG_LEVELS)[number];
  graphqlMaxCost: number;
  /** Schedule bounds (SCHEDULES_PER_ACCOUNT, SCHEDULE_MIN_INTERVAL_SECONDS, SCHEDULE_FIRING_RETRY_SECONDS). */
  schedules: { perAccount: number; minIntervalSeconds: number; firingRetryMs: number };
  /** graphql-ws limits (GRAPHQL_WS_MAX_*): message bytes, sockets per token, operations per socket. */
  graphqlWs: { maxPayloadBytes: number; maxSocketsPerToken: number; maxSubscriptionsPerSocket: number };
  /** OAuth rate limits per client IP per minute (OAUTH_REGISTRATIONS_PER_MINUTE, OAUTH_TOKEN_REQUESTS_PER_MINUTE). */
  oauth: { registrationsPerMinute: number; tokenRequestsPerMinute: number };
  /** A2A_MAX_STREAMS_PER_KEY. */
  a2aMaxStreamsPerKey: number;
  /** How stale the API's active-job gauges may be: /metrics queries them at most this often. */
  metricsJobsRefreshMs: number;
  retentionBatchSize: number;
  /** The worker's /metrics port (Temporal SDK + job metrics); unset: no worker metrics server. */
  workerMetricsPort: number | undefined;
  /** OpenTelemetry traces: `tracesUrl` set means on (OTLP/HTTP JSON to that URL). */
  telemetry: { tracesUrl: string | undefined; serviceName: string };
}

/** Values the dev launcher supplies (generated secrets, embedded services) when the env lacks them. */
export interface ConfigDefaults {
  databaseUrl?: string;
  temporalAddress?: string;
  operatorToken?: string;
  secretEncryptionKey?: Buffer;
}

function formatIssues(error: z.ZodError, raw: Record<string, string | undefined>): string[] {
  return error.issues.map((issue) => {
    const name = String(issue.path[0] ?? "environment");
    const value = raw[name];
    const secret = /TOKEN|KEY|SECRET|PASSWORD/i.test(name) || name === "DATABASE_URL";
    const shown = value === undefined || secret ? "" : ` (got ${JSON.stringify(value)})`;
    return `${name}: ${issue.message}${shown}`;
  });
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === "" || value === "false") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export function loadConfig(
  source: Record<string, string | undefined> = process.env,
  defaults: ConfigDefaults = {},
): Config {
  // Empty strings mean "unset": docker-compose and shells produce them for missing values.
  const raw: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(source)) raw[k] = v === "" ? undefined : v;

  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatIssues(parsed.error, raw));
  const env: Env = parsed.data;
  const isProduction = env.NODE_ENV === "production";

  const problems: string[] = [];
  if (isProduction) {
    if (!env.OPERATOR_TOKEN) problems.push("OPERATOR_TOKEN: required when NODE_ENV=production");
    if (!env.SECRET_ENCRYPTION_KEY)
      problems.push("SECRET_ENCRYPTION_KEY: required when NODE_ENV=production (openssl rand -base64 32)");
    if (!env.PUBLIC_BASE_URL) problems.push("PUBLIC_BASE_URL: required when NODE_ENV=production");
    // Webhook URLs are HTTPS only (spec 5.2.6): an http:// base would hand out URLs that get 403.
    else if (new URL(env.PUBLIC_BASE_URL).protocol !== "https:") problems.push("PUBLIC_BASE_URL: must be an https:// URL when NODE_ENV=production");
    if (env.EGRESS_ALLOW_PRIVATE) problems.push("EGRESS_ALLOW_PRIVATE: for development and tests only; use EGRESS_ALLOW_ADDRESSES for an internal API");
    // No built-in simulator in production: each provider needs its key unless every one of its
    // models is routed to an OpenAI-compatible upstream.
    for (const [provider, key] of [["provider_a", env.PROVIDER_A_API_KEY], ["provider_b", env.PROVIDER_B_API_KEY]] as const) {
      const routed = SUPPORTED_MODELS.filter((m) => m.startsWith(`${provider}/`)).every((m) => env.OPENAI_COMPATIBLE_ROUTES?.[m]);
      if (!key && !routed) problems.push(`${provider.toUpperCase()}_API_KEY: required when NODE_ENV=production (the built-in simulator is for development only)`);
    }
  }
  if ((env.TLS_CERT_FILE === undefined) !== (env.TLS_KEY_FILE === undefined)) {
    problems.push("TLS_CERT_FILE and TLS_KEY_FILE: set both or neither");
  }
  const operatorToken = env.OPERATOR_TOKEN ?? defaults.operatorToken;
  const secretEncryptionKey = env.SECRET_ENCRYPTION_KEY ?? defaults.secretEncryptionKey;
  if (!isProduction && (!operatorToken || !secretEncryptionKey)) {
    if (!operatorToken) problems.push("OPERATOR_TOKEN: not set (npm start generates one in DATA_DIR)");
    if (!secretEncryptionKey)
      problems.push("SECRET_ENCRYPTION_KEY: not set (npm start generates one in DATA_DIR)");
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const host = env.HOST ?? (isProduction ? "0.0.0.0" : "127.0.0.1");
  const scheme = env.TLS_CERT_FILE ? "https" : "http";
  const displayHost = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `${scheme}://${displayHost}:${env.PORT}`).replace(/\/+$/, "");

  return {
    env: env.NODE_ENV,
    isProduction,
    port: env.PORT,
    host,
    dataDir: env.DATA_DIR,
    databaseUrl: env.DATABASE_URL ?? defaults.databaseUrl,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    temporal: {
      address: env.TEMPORAL_ADDRESS ?? defaults.temporalAddress,
      namespace: env.TEMPORAL_NAMESPACE,
      taskQueue: env.TEMPORAL_TASK_QUEUE,
      cliPath: env.TEMPORAL_CLI_PATH,
      eagerStart: env.TEMPORAL_EAGER_START,
    },
    operatorToken: operatorToken!,
    secretEncryptionKey: secretEncryptionKey!,
    publicBaseUrl,
    publicBaseUrlExplicit: env.PUBLIC_BASE_URL !== undefined,
    // Plain HTTP is only the default off production; production must opt in explicitly.
    allowInsecureHttp: env.ALLOW_INSECURE_HTTP ?? !isProduction,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    tls: env.TLS_CERT_FILE && env.TLS_KEY_FILE ? { certFile: env.TLS_CERT_FILE, keyFile: env.TLS_KEY_FILE } : undefined,
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    workerShutdownGraceMs: env.WORKER_SHUTDOWN_GRACE_MS,
    providers: {
      a: { baseUrl: env.PROVIDER_A_BASE_URL.replace(/\/+$/, ""), apiKey: env.PROVIDER_A_API_KEY },
      b: { baseUrl: env.PROVIDER_B_BASE_URL.replace(/\/+$/, ""), apiKey: env.PROVIDER_B_API_KEY },
      modelNameMap: env.MODEL_NAME_MAP ?? {},
      openAiCompatibleRoutes: env.OPENAI_COMPATIBLE_ROUTES ?? {},
      timeoutMs: env.UPSTREAM_TIMEOUT_MS,
      maxRetries: env.UPSTREAM_MAX_RETRIES,
      breaker: { failures: env.MODEL_BREAKER_FAILURES, windowMs: env.MODEL_BREAKER_WINDOW_MS, cooldownMs: env.MODEL_BREAKER_COOLDOWN_MS },
      defaultMaxOutputTokens: env.DEFAULT_MAX_OUTPUT_TOKENS,
      maxImageBytes: env.CHAT_MAX_IMAGE_BYTES,
    },
    modelPrices: env.MODEL_PRICES ?? {},
    defaultRateLimitPerMinute: env.DEFAULT_RATE_LIMIT_PER_MINUTE,
    holdReclaimIntervalMs: env.HOLD_RECLAIM_INTERVAL_MS,
    a2aBlockingWaitMs: env.A2A_BLOCKING_WAIT_SECONDS * 1000,
    sandbox: {
      cpuTimeMs: env.SCRIPT_CPU_TIME_MS,
      wallTimeMs: env.SCRIPT_WALL_TIME_MS,
      memoryMb: env.SCRIPT_MEMORY_MB,
      maxHostCalls: env.SCRIPT_MAX_HOST_CALLS,
      maxLogLines: env.SCRIPT_MAX_LOG_LINES,
      maxLogLineBytes: env.SCRIPT_MAX_LOG_LINE_BYTES,
      maxLogBytes: env.SCRIPT_MAX_LOG_BYTES,
      maxResultBytes: env.SCRIPT_MAX_RESULT_BYTES,
      maxScriptBytes: env.SCRIPT_MAX_BYTES,
      poolSize: env.SANDBOX_POOL_SIZE,
    },
    runConcurrency: {
      perAccount: env.RUN_MAX_CONCURRENT_PER_ACCOUNT ?? null,
      perAgent: env.RUN_MAX_CONCURRENT_PER_AGENT === undefined ? null : Math.min(env.RUN_MAX_CONCURRENT_PER_AGENT, env.RUN_MAX_CONCURRENT_PER_ACCOUNT ?? Infinity),
      slots: env.RUN_SLOTS ?? env.SANDBOX_POOL_SIZE,
    },
    egress: {
      // Refused in production above; npm start opts in on loopback and says so in its banner.
      allowPrivate: env.EGRESS_ALLOW_PRIVATE ?? false,
      allowAddresses: (env.EGRESS_ALLOW_ADDRESSES ?? "").split(",").map((a) => a.trim()).filter(Boolean),
      resolve: env.EGRESS_RESOLVE ?? {},
      caFile: env.EGRESS_CA_FILE,
      timeoutMs: env.EGRESS_TIMEOUT_MS,
      maxResponseBytes: env.EGRESS_MAX_RESPONSE_BYTES,
      maxRedirects: env.EGRESS_MAX_REDIRECTS,
    },
    outbound: {
      retrySchedule: env.OUTBOUND_RETRY_SCHEDULE,
      connectTimeoutMs: env.OUTBOUND_CONNECT_TIMEOUT_MS,
      timeoutMs: env.OUTBOUND_TIMEOUT_MS,
      maxResponseBytes: env.OUTBOUND_MAX_RESPONSE_BYTES,
      concurrency: env.OUTBOUND_CONCURRENCY,
      maxConcurrentPerAccount: env.OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT,
      maxPendingResends: env.OUTBOUND_MAX_PENDING_RESENDS,
      stuckGraceMs: env.OUTBOUND_STUCK_GRACE_MS,
    },
    a2a: { pushConfigsPerTask: env.A2A_PUSH_CONFIGS_PER_TASK, streamRecordAfterMs: env.A2A_STREAM_RECORD_AFTER_MS },
    schedules: { perAccount: env.SCHEDULES_PER_ACCOUNT, minIntervalSeconds: env.SCHEDULE_MIN_INTERVAL_SECONDS, firingRetryMs: env.SCHEDULE_FIRING_RETRY_SECONDS * 1000 },
    logLevel: env.LOG_LEVEL,
    graphqlMaxCost: env.GRAPHQL_MAX_COST,
    graphqlWs: {
      maxPayloadBytes: env.GRAPHQL_WS_MAX_PAYLOAD_BYTES,
      maxSocketsPerToken: env.GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN,
      maxSubscriptionsPerSocket: env.GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET,
    },
    a2aMaxStreamsPerKey: env.A2A_MAX_STREAMS_PER_KEY,
    oauth: { registrationsPerMinute: env.OAUTH_REGISTRATIONS_PER_MINUTE, tokenRequestsPerMinute: env.OAUTH_TOKEN_REQUESTS_PER_MINUTE },
    metricsJobsRefreshMs: env.METRICS_JOBS_REFRESH_SECONDS * 1000,
    retentionBatchSize: env.RETENTION_BATCH_SIZE,
    workerMetricsPort: env.WORKER_METRICS_PORT,
    telemetry: {
      tracesUrl:
        env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === "none"
          ? undefined
          : (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces` : undefined)),
      serviceName: env.OTEL_SERVICE_NAME,
    },
  };
}

/** Entry points call this: a config problem prints its message (no stack) and exits 1. */
export function loadConfigOrExit(
  source: Record<string, string | undefined> = process.env,
  defaults: ConfigDefaults = {},
): Config {
  try {
    return loadConfig(source, defaults);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
