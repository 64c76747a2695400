import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { withTransaction } from "../db/tx.js";
import { newId } from "../infra/ids.js";
import { parseUsd } from "../infra/money.js";
import { issueAdminToken } from "./admin-tokens.js";

export interface AccountRow {
  id: string;
  name: string;
  balanceMicros: number;
  retentionDays: number;
  relaxSignatureTimestamp: boolean;
  createdAt: Date;
}

const SELECT = `select id, name, balance_micros as "balanceMicros", retention_days as "retentionDays",
  relax_signature_timestamp as "relaxSignatureTimestamp", created_at as "createdAt" from accounts`;

/** Parses a USD amount given by a person ("10", "2.50"); `allowZero` for initial balances. */
export function parseAmount(value: string | number, param: string, allowZero = false): bigint {
  const micros = parseUsd(value);
  if (micros === null) {
    throw new AppError("validation_failed", `${param} must be a decimal USD amount with at most 6 decimal places, e.g. "10" or "2.50"`, { param });
  }
  if (micros === 0n && !allowZero) throw new AppError("validation_failed", `${param} must be greater than zero`, { param });
  return micros;
}

function validateName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200) throw new AppError("validation_failed", "name must be 1 to 200 characters", { param: "name" });
  return trimmed;
}

export async function createAccount(pool: pg.Pool, name: string, initialBalanceMicros: bigint): Promise<{ account: AccountRow; adminToken: string }> {
  const cleanName = validateName(name);
  return withTransaction(pool, async (db) => {
    const id = newId("acc");
    await db.query("insert into accounts (id, name, balance_micros, retention_days, relax_signature_timestamp, created_at) values ($1, $2, $3, 30, false, now())", [
      id,
      cleanName,
      initialBalanceMicros.toString(),
    ]);
    if (initialBalanceMicros > 0n) {
      await db.query("insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) values ($1, $2, 'initial_balance', 'operator', now())", [
        id,
        initialBalanceMicros.toString(),
      ]);
    }
    const { token: adminToken } = await issueAdminToken(db, id, "initial");
    const { rows } = await db.query<AccountRow>(`${SELECT} where id = $1`, [id]);
    return { account: rows[0]!, adminToken };
  });
}

export async function getAccount(pool: pg.Pool, id: string): Promise<AccountRow | undefined> {
  const { rows } = await pool.query<AccountRow>(`${SELECT} where id = $1`, [id]);
  return rows[0];
}

export async function requireAccount(pool: pg.Pool, id: string): Promise<AccountRow> {
  const account = await getAccount(pool, id);
  if (!account) throw new AppError("not_found", `Account ${id} not found`);
  return account;
}

/** Credits the balance and writes the matching ledger row in one transaction. */
export async function topUp(pool: pg.Pool, accountId: string, amountMicros: bigint): Promise<AccountRow> {
  return withTransaction(pool, async (db) => {
    const { rowCount } = await db.query("update accounts set balance_micros = balance_micros + $2 where id = $1", [accountId, amountMicros.toString()]);
    if (!rowCount) throw new AppError("not_found", `Account ${accountId} not found`);
    await db.query("insert into ledger_entries (account_id, amount_micros, kind, reference, created_at) values ($1, $2, 'top_up', 'operator', now())", [
      accountId,
      amountMicros.toString(),
    ]);
    const { rows } = await db.query<AccountRow>(`${SELECT} where id = $1`, [accountId]);
    return rows[0]!;
  });
}

export async function createAdminToken(pool: pg.Pool, accountId: string): Promise<string> {
  await requireAccount(pool, accountId);
  return (await issueAdminToken(pool, accountId, "cli")).token;
}

/** Read at request time by webhook authentication, so a settings change applies to the very next request. */
export async function relaxesSignatureTimestamp(pool: pg.Pool, accountId: string): Promise<boolean> {
  const { rows } = await pool.query<{ relax: boolean }>("select relax_signature_timestamp as relax from accounts where id = $1", [accountId]);
  return rows[0]?.relax === true;
}

export async function updateAccountSettings(
  pool: pg.Pool,
  accountId: string,
  settings: { retentionDays?: number | null; relaxSignatureTimestamp?: boolean | null },
): Promise<AccountRow> {
  if (settings.retentionDays != null && (!Number.isInteger(settings.retentionDays) || settings.retentionDays < 1 || settings.retentionDays > 3650)) {
    throw new AppError("validation_failed", "retentionDays must be a whole number of days from 1 to 3650", { param: "retentionDays" });
  }
  // Nothing caches account settings (webhook authentication reads them at request time), so no
  // instance needs to hear of the change.
  await pool.query(
    "update accounts set retention_days = coalesce($2, retention_days), relax_signature_timestamp = coalesce($3, relax_signature_timestamp) where id = $1",
    [accountId, settings.retentionDays ?? null, settings.relaxSignatureTimestamp ?? null],
  );
  return requireAccount(pool, accountId);
}
