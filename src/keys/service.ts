import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { sha256Hex } from "../infra/crypto.js";
import { newId, randomToken } from "../infra/ids.js";
import { parseUsd } from "../infra/money.js";
import type { Runtime } from "../runtime/runtime.js";
import { sqlNames } from "../db/names.js";
import { OAuthModel } from "../db/schema.js";
import { keysSpentMicros, seedKeySpend, SPEND_LIMIT_PERIODS, type SpendLimitPeriod } from "../billing/key-spend.js";

const O = sqlNames(OAuthModel);

/** Channel on which key changes (delete, new limit) are announced to every API instance. */
export const KEY_EVENTS_CHANNEL = "agw_api_keys";

export interface ApiKeyRow {
  id: string;
  agentId: string;
  name: string;
  prefix: string;
  last4: string;
  rateLimitPerMinute: number | null;
  expiresAt: Date | null;
  /** Text: a bigint may exceed what a JS number holds exactly. */
  spendLimitMicros: string | null;
  spendLimitPeriod: SpendLimitPeriod | null;
  /** Held or spent in the current period; null without a spend limit. */
  spentMicros: number | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  kind: "SECRET" | "OAUTH";
  clientName: string | null;
  clientId: string | null;
}

const COLUMNS = `id, agent_id as "agentId", name, prefix, last4, rate_limit_per_minute as "rateLimitPerMinute", expires_at as "expiresAt",
  spend_limit_micros::text as "spendLimitMicros", spend_limit_period as "spendLimitPeriod", last_used_at as "lastUsedAt", created_at as "createdAt",
  kind, client_name as "clientName", client_id as "clientId"`;
const SELECT = `select ${COLUMNS} from api_keys`;

function checkRateLimit(value: number | null | undefined): void {
  if (value != null && (!Number.isInteger(value) || value < 1 || value > 1_000_000)) {
    throw new AppError("validation_failed", "rateLimitPerMinute must be a whole number from 1 to 1000000, or null for the account default", { param: "rateLimitPerMinute" });
  }
}

/** Key controls as given through the API; `undefined` leaves a field as it is (update). */
export interface KeyControls {
  rateLimitPerMinute?: number | null;
  expiresAt?: Date | null;
  /** USD decimal ("5", "0.25"); null removes the limit. */
  spendLimit?: string | null;
  spendLimitPeriod?: SpendLimitPeriod | null;
}

/** Validates and converts `KeyControls` to column values (undefined: unchanged). */
function controlValues(c: KeyControls, creating = false) {
  checkRateLimit(c.rateLimitPerMinute);
  if (c.expiresAt != null && (!(c.expiresAt instanceof Date) || Number.isNaN(c.expiresAt.getTime()) || c.expiresAt.getTime() <= Date.now())) {
    throw new AppError("validation_failed", "expiresAt must be a date and time in the future (ISO 8601), or null for a key that never expires", { param: "expiresAt" });
  }
  let spendLimitMicros: string | null | undefined;
  if (c.spendLimit != null) {
    const micros = parseUsd(c.spendLimit);
    if (micros === null || micros <= 0n) {
      throw new AppError("validation_failed", 'spendLimit must be a positive USD amount with at most 6 decimal places, e.g. "5" or "0.25", or null for no limit', { param: "spendLimit" });
    }
    spendLimitMicros = micros.toString();
  } else if (c.spendLimit === null) spendLimitMicros = null;
  if (c.spendLimitPeriod != null && !SPEND_LIMIT_PERIODS.includes(c.spendLimitPeriod)) {
    throw new AppError("validation_failed", `spendLimitPeriod must be one of ${SPEND_LIMIT_PERIODS.join(", ")}`, { param: "spendLimitPeriod" });
  }
  // A limit without a period counts per month (the usual budget).
  const spendLimitPeriod = c.spendLimitPeriod ?? (creating && spendLimitMicros != null ? "MONTH" : null);
  return { rateLimitPerMinute: c.rateLimitPerMinute, expiresAt: c.expiresAt, spendLimitMicros, spendLimitPeriod };
}

async function withSpent(pool: pg.Pool, rows: ApiKeyRow[]): Promise<ApiKeyRow[]> {
  const spent = await keysSpentMicros(
    pool,
    rows.filter((r) => r.spendLimitMicros !== null).map((r) => r.id),
  );
  return rows.map((r) => ({ ...r, spentMicros: r.spendLimitMicros === null ? null : (spent.get(r.id) ?? 0) }));
}

export async function createApiKey(
  pool: pg.Pool,
  accountId: string,
  agentId: string,
  name: string,
  controls: KeyControls = {},
): Promise<{ key: string; apiKey: ApiKeyRow }> {
  const clean = name.trim();
  if (clean.length < 1 || clean.length > 200) throw new AppError("validation_failed", "name must be 1 to 200 characters", { param: "name" });
  const v = controlValues(controls, true);
  const key = randomToken("a2a");
  const { rows } = await pool.query<ApiKeyRow>(
    `insert into api_keys (id, account_id, agent_id, name, key_hash, prefix, last4, rate_limit_per_minute, expires_at, spend_limit_micros, spend_limit_period, created_at)
     select $1, a.account_id, a.id, $4, $5, $6, $7, $8, $9, $10, $11, now() from agents a where a.id = $3 and a.account_id = $2
     returning ${COLUMNS}`,
    [newId("key"), accountId, agentId, clean, sha256Hex(key), key.slice(0, 8), key.slice(-4), v.rateLimitPerMinute ?? null, v.expiresAt ?? null, v.spendLimitMicros ?? null, v.spendLimitPeriod],
  );
  if (!rows[0]) throw new AppError("not_found", `Agent ${agentId} not found`);
  return { key, apiKey: (await withSpent(pool, rows))[0]! };
}

export async function listApiKeys(pool: pg.Pool, accountId: string, agentId: string): Promise<ApiKeyRow[]> {
  const { rows } = await pool.query<ApiKeyRow>(`${SELECT} where account_id = $1 and agent_id = $2 order by created_at, id`, [accountId, agentId]);
  return withSpent(pool, rows);
}

/**
 * Deletes, then announces. The DELETE runs in autocommit, so it is committed before the NOTIFY
 * goes out: an instance that hears it and reloads can never find the key again.
 */
export async function deleteApiKey(runtime: Runtime, accountId: string, id: string): Promise<boolean> {
  const { rows } = await runtime.pool.query<{ grant_id: string | null }>("delete from api_keys where id = $1 and account_id = $2 returning grant_id", [id, accountId]);
  if (!rows[0]) return false;
  // An OAuth consent's key: its grant and every token of it go too (its tokens already resolve to nothing).
  if (rows[0].grant_id) await runtime.pool.query(`delete from ${O.table} where ${O.grantId} = $1`, [rows[0].grant_id]);
  await runtime.events.publish(KEY_EVENTS_CHANNEL, id);
  return true;
}

/**
 * Changes a key's controls (omitted ones stay), then announces it like a deletion, so no instance
 * keeps serving the old expiry or limit from its cache.
 */
export async function updateApiKey(runtime: Runtime, accountId: string, id: string, controls: KeyControls): Promise<ApiKeyRow> {
  const v = controlValues(controls, false);
  const given = (value: unknown) => value !== undefined;
  const { rows } = await runtime.pool.query<ApiKeyRow>(
    `update api_keys set rate_limit_per_minute = case when $3 then $4::int else rate_limit_per_minute end,
            expires_at = case when $5 then $6::timestamptz else expires_at end,
            spend_limit_micros = case when $7 then $8::bigint else spend_limit_micros end,
            spend_limit_period = case when $9 then coalesce($10::text, 'MONTH') when $8::bigint is not null then coalesce(spend_limit_period, 'MONTH') else spend_limit_period end
      where id = $1 and account_id = $2
     returning ${COLUMNS}`,
    [
      id,
      accountId,
      given(v.rateLimitPerMinute),
      v.rateLimitPerMinute ?? null,
      given(v.expiresAt),
      v.expiresAt ?? null,
      given(v.spendLimitMicros),
      v.spendLimitMicros ?? null,
      given(controls.spendLimitPeriod),
      controls.spendLimitPeriod ?? null,
    ],
  );
  // A new limit or period counts what the key already spent in that period (from the ledger).
  if (rows[0] && (given(v.spendLimitMicros) || given(controls.spendLimitPeriod))) await seedKeySpend(runtime.pool, accountId, id);
  if (!rows[0]) throw new AppError("not_found", `API key ${id} not found`);
  await runtime.events.publish(KEY_EVENTS_CHANNEL, id);
  return (await withSpent(runtime.pool, rows))[0]!;
}

/** Sets the account's default per-key limit (null: the installation default). */
export async function setAccountRateLimit(runtime: Runtime, accountId: string, rateLimitPerMinute: number | null): Promise<void> {
  checkRateLimit(rateLimitPerMinute);
  await runtime.pool.query("update accounts set default_rate_limit_per_minute = $2 where id = $1", [accountId, rateLimitPerMinute]);
  await runtime.events.publish(KEY_EVENTS_CHANNEL, `account:${accountId}`);
}
