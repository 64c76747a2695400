import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { withTransaction } from "../db/tx.js";
import { decryptSecret, encryptSecret } from "../infra/crypto.js";
import { newId } from "../infra/ids.js";
import type { Runtime } from "../runtime/runtime.js";
import { clock, GRACE_MS } from "./clock.js";
import { announceTriggerChange } from "./cache.js";
import { generateSecret, validateCustomSecret, type StoredSecret } from "./secrets.js";
import { validateCallbackUrl } from "../outbound/target.js";

/** Where a trigger keeps its secrets: the inbound ones (webhook authentication) and the callback-signing ones. Same shape, same rules. */
export type SecretTable = "trigger_secrets" | "trigger_callback_secrets";

export interface TriggerRow {
  id: string;
  accountId: string;
  agentId: string;
  description: string | null;
  active: boolean;
  secretRequired: boolean;
  callbackUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const SELECT = `select id, account_id as "accountId", agent_id as "agentId", description, active,
  secret_required as "secretRequired", callback_url as "callbackUrl", created_at as "createdAt", updated_at as "updatedAt" from triggers`;

export function webhookUrl(runtime: Runtime, triggerId: string): string {
  return `${runtime.config.publicBaseUrl}/api/triggers/${triggerId}/webhook`;
}

function checkDescription(description: string | null | undefined): string | null {
  if (description == null) return null;
  if (description.length > 2000) throw new AppError("validation_failed", "description must be at most 2000 characters", { param: "description" });
  return description;
}

const changed = (runtime: Runtime, triggerId: string) => announceTriggerChange(runtime, triggerId);

export async function listTriggers(pool: pg.Pool, accountId: string, agentId?: string): Promise<TriggerRow[]> {
  const { rows } = agentId
    ? await pool.query<TriggerRow>(`${SELECT} where account_id = $1 and agent_id = $2 order by created_at, id`, [accountId, agentId])
    : await pool.query<TriggerRow>(`${SELECT} where account_id = $1 order by created_at, id`, [accountId]);
  return rows;
}

/** A foreign trigger id answers exactly like a missing one. */
export async function requireTrigger(pool: pg.Pool, accountId: string, id: string): Promise<TriggerRow> {
  const { rows } = await pool.query<TriggerRow>(`${SELECT} where id = $1 and account_id = $2`, [id, accountId]);
  if (!rows[0]) throw new AppError("trigger_not_found", `Trigger ${id} not found`);
  return rows[0];
}

export async function createTrigger(
  runtime: Runtime,
  accountId: string,
  agentId: string,
  description: string | null | undefined,
  callbackUrl?: string | null,
): Promise<{ trigger: TriggerRow; secret: string; callbackSecret: string }> {
  const desc = checkDescription(description);
  const callback = callbackUrl == null ? null : validateCallbackUrl(callbackUrl, runtime.config.egress);
  const secret = generateSecret();
  const callbackSecret = generateSecret();
  const trigger = await withTransaction(runtime.pool, async (db) => {
    const agent = await db.query("select 1 from agents where id = $1 and account_id = $2", [agentId, accountId]);
    if (!agent.rowCount) throw new AppError("not_found", `Agent ${agentId} not found`);
    const id = newId("trg");
    await db.query(
      "insert into triggers (id, account_id, agent_id, description, active, secret_required, callback_url, created_at, updated_at) values ($1, $2, $3, $4, true, true, $5, now(), now())",
      [id, accountId, agentId, desc, callback],
    );
    await insertCurrentSecret(runtime, db, "trigger_secrets", id, secret);
    await insertCurrentSecret(runtime, db, "trigger_callback_secrets", id, callbackSecret);
    const { rows } = await db.query<TriggerRow>(`${SELECT} where id = $1`, [id]);
    return rows[0]!;
  });
  return { trigger, secret, callbackSecret };
}

export async function updateTrigger(
  runtime: Runtime,
  accountId: string,
  id: string,
  fields: { description?: string | null; secretRequired?: boolean | null; active?: boolean | null; callbackUrl?: string | null },
): Promise<TriggerRow> {
  const desc = fields.description === undefined ? undefined : checkDescription(fields.description);
  // undefined: unchanged; null or "": no callback any more.
  const callback = fields.callbackUrl === undefined ? undefined : fields.callbackUrl === null || fields.callbackUrl.trim() === "" ? null : validateCallbackUrl(fields.callbackUrl, runtime.config.egress);
  const { rowCount } = await runtime.pool.query(
    `update triggers set description = case when $3 then $4 else description end,
       secret_required = coalesce($5, secret_required), active = coalesce($6, active),
       callback_url = case when $7 then $8 else callback_url end, updated_at = now()
     where id = $1 and account_id = $2`,
    [id, accountId, desc !== undefined, desc ?? null, fields.secretRequired ?? null, fields.active ?? null, callback !== undefined, callback ?? null],
  );
  if (!rowCount) throw new AppError("trigger_not_found", `Trigger ${id} not found`);
  // A trigger made before callbacks existed gets its callback secret when it first needs one.
  if (callback) await ensureCallbackSecret(runtime, id);
  await changed(runtime, id);
  return requireTrigger(runtime.pool, accountId, id);
}

/** The trigger's new current secret, sealed (AES-256-GCM) so its owner can copy it later. */
async function insertCurrentSecret(runtime: Runtime, db: pg.PoolClient | pg.Pool, table: SecretTable, triggerId: string, secret: string): Promise<void> {
  await db.query(`insert into ${table} (id, trigger_id, sealed_secret, expires_at, created_at) values ($1, $2, $3, null, now())`, [
    newId("sec"),
    triggerId,
    encryptSecret(secret, runtime.config.secretEncryptionKey),
  ]);
}

/**
 * Makes `secret` current. The previous current secret keeps working for the 24-hour grace window
 * (its `expires_at`) unless `revokePrevious`, which ends it and every older one now (a leaked
 * secret). Returns when the previous secret stops working.
 */
async function replaceSecret(runtime: Runtime, accountId: string, id: string, secret: string, revokePrevious: boolean, table: SecretTable = "trigger_secrets"): Promise<Date> {
  const now = new Date(clock.now());
  const graceEnd = revokePrevious ? now : new Date(now.getTime() + GRACE_MS);
  await withTransaction(runtime.pool, async (db) => {
    await lockTrigger(db, accountId, id);
    if (revokePrevious) await db.query(`delete from ${table} where trigger_id = $1`, [id]);
    else {
      await db.query(`update ${table} set expires_at = $2 where trigger_id = $1 and expires_at is null`, [id, graceEnd]);
      // Secrets past their grace window are useless; drop them so the table stays small.
      await db.query(`delete from ${table} where trigger_id = $1 and expires_at <= $2`, [id, now]);
    }
    await insertCurrentSecret(runtime, db, table, id, secret);
    await db.query("update triggers set updated_at = now() where id = $1", [id]);
  });
  await changed(runtime, id);
  return graceEnd;
}

async function lockTrigger(db: pg.PoolClient, accountId: string, id: string): Promise<void> {
  const t = await db.query("select 1 from triggers where id = $1 and account_id = $2 for update", [id, accountId]);
  if (!t.rowCount) throw new AppError("trigger_not_found", `Trigger ${id} not found`);
}

export async function rotateTriggerSecret(runtime: Runtime, accountId: string, id: string, revokePrevious = false): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
  const secret = generateSecret();
  const previousSecretExpiresAt = await replaceSecret(runtime, accountId, id, secret, revokePrevious);
  return { secret, previousSecretExpiresAt };
}

/** A new callback-signing secret; callbacks are signed with both until the previous one's 24-hour grace ends. */
export async function rotateCallbackSecret(runtime: Runtime, accountId: string, id: string): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
  const secret = generateSecret();
  const previousSecretExpiresAt = await replaceSecret(runtime, accountId, id, secret, false, "trigger_callback_secrets");
  return { secret, previousSecretExpiresAt };
}

async function ensureCallbackSecret(runtime: Runtime, triggerId: string): Promise<void> {
  const { rowCount } = await runtime.pool.query("select 1 from trigger_callback_secrets where trigger_id = $1 and expires_at is null", [triggerId]);
  if (!rowCount) await insertCurrentSecret(runtime, runtime.pool, "trigger_callback_secrets", triggerId, generateSecret());
}

export async function setTriggerSecret(runtime: Runtime, accountId: string, id: string, secret: string, revokePrevious = false): Promise<TriggerRow> {
  await replaceSecret(runtime, accountId, id, validateCustomSecret(secret), revokePrevious);
  return requireTrigger(runtime.pool, accountId, id);
}

/**
 * Ends the grace window of every previous secret now (a leaked one): only the current secret
 * works, on this instance at once and on the others when the change notification arrives.
 */
export async function revokePreviousTriggerSecrets(runtime: Runtime, accountId: string, id: string): Promise<TriggerRow> {
  await withTransaction(runtime.pool, async (db) => {
    await lockTrigger(db, accountId, id);
    await db.query("delete from trigger_secrets where trigger_id = $1 and expires_at is not null", [id]);
    await db.query("update triggers set updated_at = now() where id = $1", [id]);
  });
  await changed(runtime, id);
  return requireTrigger(runtime.pool, accountId, id);
}

/** Every secret of a trigger that may still be valid (current first), decrypted. */
export async function loadSecrets(runtime: Runtime, triggerId: string, table: SecretTable = "trigger_secrets"): Promise<StoredSecret[]> {
  const { rows } = await runtime.pool.query<{ sealed_secret: string; expires_at: Date | null }>(
    `select sealed_secret, expires_at from ${table} where trigger_id = $1 order by expires_at desc nulls first`,
    [triggerId],
  );
  return rows.map((r) => ({ secret: decryptSecret(r.sealed_secret, runtime.config.secretEncryptionKey), expiresAt: r.expires_at ? r.expires_at.getTime() : null }));
}

export async function currentSecret(runtime: Runtime, triggerId: string, table: SecretTable = "trigger_secrets"): Promise<string | null> {
  const secrets = await loadSecrets(runtime, triggerId, table);
  return secrets.find((s) => s.expiresAt === null)?.secret ?? null;
}

/** A copy-paste curl for the x-trigger-secret scheme and one for the signed scheme. */
export function testCommands(url: string, secret: string): { plain: string; signed: string } {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const body = '{"hello":"world"}';
  const plain = `curl -sS -X POST ${q(url)} -H 'Content-Type: application/json' -H ${q(`x-trigger-secret: ${secret}`)} -d ${q(body)}`;
  const signed = [
    `SECRET=${q(secret)}; BODY=${q(body)}; TS=$(date +%s)`,
    `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" -hex | sed 's/^.* //')`,
    `curl -sS -X POST ${q(url)} -H 'Content-Type: application/json' -H "X-Service-Timestamp: $TS" -H "X-Service-Signature: sha256=$SIG" -d "$BODY"`,
  ].join("\n");
  return { plain, signed };
}
