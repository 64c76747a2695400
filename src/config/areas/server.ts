import { z } from "zod";
import { area, variable } from "../variable.js";
import { bool, port, url, encryptionKey, LOG_LEVELS } from "../values.js";

/** The configuration variables of the area "Server, secrets and logs". */
export const serverArea = area("Server, secrets and logs", "The API process: where it listens, its public URL, TLS, its two secrets, graceful stop and logs.", {
  NODE_ENV: variable(z.enum(["development", "production", "test"]).default("development"), "`production` requires `OPERATOR_TOKEN`, `SECRET_ENCRYPTION_KEY`, `PUBLIC_BASE_URL` and provider keys, binds `0.0.0.0` and requires HTTPS for webhooks"),
  PORT: variable(port.default(3000), "HTTP port of the API"),
  HOST: variable(z.string().trim().min(1).optional(), "Address the API binds", "`127.0.0.1` (`0.0.0.0` in production)"),
  DATA_DIR: variable(z.string().trim().min(1).default("./.data"), "Dev state: embedded PostgreSQL, Temporal dev server database, generated dev secrets"),
  OPERATOR_TOKEN: variable(z.string().trim().min(24, "must be at least 24 characters").optional(), "Operator credential for the admin GraphQL mutations (at least 24 characters)", "generated in `DATA_DIR` (dev)"),
  SECRET_ENCRYPTION_KEY: variable(encryptionKey.optional(), "32 bytes, hex or base64: AES-256-GCM key for stored trigger secrets", "generated in `DATA_DIR` (dev)"),
  PUBLIC_BASE_URL: variable(url(["http:", "https:"]).optional(), "Base of webhook URLs and code examples", "`http://HOST:PORT`"),
  ALLOW_INSECURE_HTTP: variable(bool.optional(), "Accept webhook and job requests over plain HTTP", "`true` in dev, `false` in production"),
  TRUST_PROXY: variable(z.string().trim().optional(), "Express `trust proxy`: `true`, a hop count, or addresses/subnets of your TLS proxy", "`false`"),
  TLS_CERT_FILE: variable(z.string().trim().min(1).optional(), "PEM certificate file: serve HTTPS directly (set it and `TLS_KEY_FILE`, or neither)", "unset"),
  TLS_KEY_FILE: variable(z.string().trim().min(1).optional(), "PEM private key file of `TLS_CERT_FILE` (set both or neither)", "unset"),
  SHUTDOWN_DRAIN_MS: variable(z.coerce.number().int().min(0).max(3_600_000).default(10_000), "Graceful stop (SIGTERM/SIGINT): how long in-flight requests, chat turns and streams included, may finish; then the turns still waiting on their upstream are cut (503 `service_unavailable` with `Retry-After`, hold released; a stream is saved and billed for what it sent) and connections close. Set it below your orchestrator's kill grace period, minus a few seconds"),
  LOG_LEVEL: variable(z.enum(LOG_LEVELS).default("info"), "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`"),
});
