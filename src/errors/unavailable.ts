import { AppError } from "./app-error.js";

/**
 * A dependency outage is not a bug: while PostgreSQL restarts (or a connection to it is cut) the
 * service answers 503 with Retry-After, so clients and load balancers retry, instead of 500.
 * SQLSTATE class 08 (connection exception), 57P01–57P03 (shutdown, crash, cannot connect now),
 * 53300 (too many connections); socket errors; node-postgres' own connection messages.
 */
const PG_CODES = /^(08...|57P0[123]|53300)$/;
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTCONN"]);
const MESSAGES = /Connection terminated|terminating connection|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery)/i;

function isOutage(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === "string" && (PG_CODES.test(e.code) || SOCKET_CODES.has(e.code))) return true;
  if (typeof e.message === "string" && MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isOutage(x, depth + 1))) return true; // AggregateError (connect to ::1 and 127.0.0.1)
  return isOutage(e.cause, depth + 1);
}

/** The 503 for an error caused by a database outage; undefined for anything else. */
export function unavailableError(err: unknown): AppError | undefined {
  if (!isOutage(err)) return undefined;
  return new AppError("service_unavailable", "The service is briefly unavailable; retry shortly", { headers: { "Retry-After": "1" }, cause: err });
}
