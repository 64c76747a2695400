import { z } from "zod";
import { SUPPORTED_MODELS } from "./models.js";
import { shapeOf, type Area } from "./variable.js";
import type { LOG_LEVELS } from "./values.js";
import { serverArea } from "./areas/server.js";
import { databaseArea } from "./areas/database.js";
import { temporalArea } from "./areas/temporal.js";
import { modelsArea } from "./areas/models.js";
import { runsArea } from "./areas/runs.js";
import { egressArea } from "./areas/egress.js";
import { outboundArea } from "./areas/outbound.js";
import { protocolsArea } from "./areas/protocols.js";
import { telemetryArea } from "./areas/telemetry.js";

/**
 * The one place the environment is read and validated. Every process (API, worker, dev launcher,
 * CLI) builds its `Config` here, so a bad value fails the same way everywhere: one message that
 * names the variable, then exit. The variables, their validation and their documentation live by
 * area in areas/*.ts; this module puts them together and turns them into the `Config`.
 */

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const AREAS = [serverArea, databaseArea, temporalArea, modelsArea, runsArea, egressArea, outboundArea, protocolsArea, telemetryArea] as const;

const envSchema = z.object({
  ...shapeOf(serverArea),
  ...shapeOf(databaseArea),
  ...shapeOf(temporalArea),
  ...shapeOf(modelsArea),
  ...shapeOf(runsArea),
  ...shapeOf(egressArea),
  ...shapeOf(outboundArea),
  ...shapeOf(protocolsArea),
  ...shapeOf(telemetryArea),
});

/** The configuration's areas and their documented variables (docs/reference/configuration.md is generated from them). */
export const CONFIG_AREAS: readonly Area[] = AREAS;

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
    /** A thread is replaced after this many runs, and ended after this long without work (src/sandbox/pool.ts). */
    threadMaxRuns: number;
    threadIdleMs: number;
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
  /** Outbound deliveries (docs/guides/webhooks.md): completion callbacks, A2A push notifications. */
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
  /** RETENTION_BATCH_TIMEOUT_SECONDS: PostgreSQL cancels a retention batch that runs longer. */
  retentionBatchTimeoutMs: number;
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
      threadMaxRuns: env.SANDBOX_THREAD_MAX_RUNS,
      threadIdleMs: env.SANDBOX_THREAD_IDLE_SECONDS * 1000,
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
    retentionBatchTimeoutMs: env.RETENTION_BATCH_TIMEOUT_SECONDS * 1000,
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
