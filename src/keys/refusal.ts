import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { keyExpired } from "./auth.js";

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
  if (!key) return new AppError("invalid_api_key", "Invalid API key");
  if (key.expires_at && key.expires_at.getTime() <= Date.now()) return keyExpired(key.expires_at);
  return undefined;
}
