import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { sha256Hex } from "../infra/crypto.js";
import { newId, randomToken } from "../infra/ids.js";
import type { Runtime } from "../runtime/runtime.js";

/** Channel on which key changes (delete, new limit) are announced to every API instance. */
export const KEY_EVENTS_CHANNEL = "agw_api_keys";

export interface ApiKeyRow {
  id: string;
  agentId: string;
  name: string;
  prefix: string;
  last4: string;
  rateLimitPerMinute: number | null;
  lastUsedAt: Date | null;
  createdAt: Date;
}

const SELECT = `select id, agent_id as "agentId", name, prefix, last4, rate_limit_per_minute as "rateLimitPerMinute",
  last_used_at as "lastUsedAt", created_at as "createdAt" from api_keys`;

function checkRateLimit(value: number | null | undefined): void {
  if (value != null && (!Number.isInteger(value) || value < 1 || value > 1_000_000)) {
    throw new AppError("validation_failed", "rateLimitPerMinute must be a whole number from 1 to 1000000, or null for the account default", { param: "rateLimitPerMinute" });
  }
}

export async function createApiKey(
  pool: pg.Pool,
  accountId: string,
  agentId: string,
  name: string,
  rateLimitPerMinute?: number | null,
): Promise<{ key: string; apiKey: ApiKeyRow }> {
  const clean = name.trim();
  if (clean.length < 1 || clean.length > 200) throw new AppError("validation_failed", "name must be 1 to 200 characters", { param: "name" });
  checkRateLimit(rateLimitPerMinute);
  const key = randomToken("a2a");
  const { rows } = await pool.query<ApiKeyRow>(
    `insert into api_keys (id, account_id, agent_id, name, key_hash, prefix, last4, rate_limit_per_minute, created_at)
     select $1, a.account_id, a.id, $4, $5, $6, $7, $8, now() from agents a where a.id = $3 and a.account_id = $2
     returning id, agent_id as "agentId", name, prefix, last4, rate_limit_per_minute as "rateLimitPerMinute", last_used_at as "lastUsedAt", created_at as "createdAt"`,
    [newId("key"), accountId, agentId, clean, sha256Hex(key), key.slice(0, 8), key.slice(-4), rateLimitPerMinute ?? null],
  );
  if (!rows[0]) throw new AppError("not_found", `Agent ${agentId} not found`);
  return { key, apiKey: rows[0] };
}

export async function listApiKeys(pool: pg.Pool, accountId: string, agentId: string): Promise<ApiKeyRow[]> {
  const { rows } = await pool.query<ApiKeyRow>(`${SELECT} where account_id = $1 and agent_id = $2 order by created_at, id`, [accountId, agentId]);
  return rows;
}

/**
 * Deletes, then announces. The DELETE runs in autocommit, so it is committed before the NOTIFY
 * goes out: an instance that hears it and reloads can never find the key again.
 */
export async function deleteApiKey(runtime: Runtime, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await runtime.pool.query("delete from api_keys where id = $1 and account_id = $2", [id, accountId]);
  if (!rowCount) return false;
  await runtime.events.publish(KEY_EVENTS_CHANNEL, id);
  return true;
}

export async function updateApiKey(runtime: Runtime, accountId: string, id: string, rateLimitPerMinute: number | null): Promise<ApiKeyRow> {
  checkRateLimit(rateLimitPerMinute);
  const { rows } = await runtime.pool.query<ApiKeyRow>(
    `update api_keys set rate_limit_per_minute = $3 where id = $1 and account_id = $2
     returning id, agent_id as "agentId", name, prefix, last4, rate_limit_per_minute as "rateLimitPerMinute", last_used_at as "lastUsedAt", created_at as "createdAt"`,
    [id, accountId, rateLimitPerMinute],
  );
  if (!rows[0]) throw new AppError("not_found", `API key ${id} not found`);
  await runtime.events.publish(KEY_EVENTS_CHANNEL, id);
  return rows[0];
}

/** Sets the account's default per-key limit (null: the installation default). */
export async function setAccountRateLimit(runtime: Runtime, accountId: string, rateLimitPerMinute: number | null): Promise<void> {
  checkRateLimit(rateLimitPerMinute);
  await runtime.pool.query("update accounts set default_rate_limit_per_minute = $2 where id = $1", [accountId, rateLimitPerMinute]);
  await runtime.events.publish(KEY_EVENTS_CHANNEL, `account:${accountId}`);
}
