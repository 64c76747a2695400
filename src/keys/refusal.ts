import type pg from "pg";
import { AppError } from "../errors/app-error.js";

/**
 * The 401s of the key check, worded for whoever holds the credential they were sent: what is wrong
 * with it and what to use instead. Nothing in them is about anyone else's data: "another agent"
 * is said only of a live key of the caller's own (never which agent), and an unknown string is
 * just unknown.
 */
export const ADMIN_TOKEN_ON_KEY_ROUTE = "Admin tokens (adm_...) are for /graphql; this endpoint takes an agent key (a2a_...)";
export const OPERATOR_TOKEN_ON_KEY_ROUTE = "Operator tokens (opr_...) are for /graphql; this endpoint takes an agent key (a2a_...)";
export const UNKNOWN_KEY = "Invalid API key: no agent key (a2a_...) matches it; keys are shown once when created";

/** A credential that is not an agent key at all, or an unknown one. */
export function notAKey(token: string): AppError {
  if (token.startsWith("adm_")) return new AppError("invalid_api_key", ADMIN_TOKEN_ON_KEY_ROUTE);
  if (token.startsWith("opr_")) return new AppError("invalid_api_key", OPERATOR_TOKEN_ON_KEY_ROUTE);
  return new AppError("invalid_api_key", UNKNOWN_KEY);
}

/** A live key used on another agent's URL (A2A, MCP): its holder learns only that. */
export function keyOfAnotherAgent(): AppError {
  return new AppError("invalid_api_key", "This API key belongs to another agent: use a key created for the agent in this URL");
}

/** An OAuth access token that is unknown, expired or revoked (its grant or key deleted). */
export const invalidAccessToken = (): AppError => new AppError("invalid_api_key", "Invalid access token: it is unknown, expired or revoked; sign in again");

/** A key deleted since it was authenticated. */
export const keyDeleted = (): AppError => new AppError("invalid_api_key", "Invalid API key: it has been deleted");

/** The 401 of an expired key (spec 5.1.5): the message says why, so its owner knows to renew it. */
export function keyExpired(at: Date): AppError {
  return new AppError("invalid_api_key", `This API key expired at ${at.toISOString()}; create a new key or extend its expiry`);
}

/** 402 for a key over its spend limit while the account still has money. */
export function keySpendLimitExceeded(): AppError {
  return new AppError("key_spend_limit_exceeded", "This API key reached its spend limit for the current period; raise the key's limit or wait for the next period");
}

/**
 * When a hold was refused for a request with a key, whether the key is the reason because it was
 * deleted or expired since it was authenticated (401). Undefined: it was not.
 */
export async function keyRefusal(pool: pg.Pool, keyId: string): Promise<AppError | undefined> {
  const { rows } = await pool.query<{ expires_at: Date | null }>("select expires_at from api_keys where id = $1", [keyId]);
  const key = rows[0];
  if (!key) return keyDeleted();
  if (key.expires_at && key.expires_at.getTime() <= Date.now()) return keyExpired(key.expires_at);
  return undefined;
}
