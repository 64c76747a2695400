import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { sha256Hex } from "../infra/crypto.js";
import { newId, randomToken } from "../infra/ids.js";

/** Admin tokens (`adm_…`): shown once at creation; only the SHA-256 hash is stored. */

/** Channel announcing a revoked token's id, so every API instance closes its open sockets. */
export const ADMIN_TOKEN_REVOKED = "admin_token_revoked";

export interface AdminTokenRow {
  id: string;
  name: string;
  prefix: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}
const COLUMNS = `id, name, prefix, last_used_at as "lastUsedAt", created_at as "createdAt"`;

export async function issueAdminToken(db: pg.Pool | pg.PoolClient, accountId: string, name = ""): Promise<{ token: string; row: AdminTokenRow }> {
  const token = randomToken("adm");
  const { rows } = await db.query<AdminTokenRow>(
    `insert into admin_tokens (id, account_id, token_hash, prefix, name, created_at) values ($1, $2, $3, $4, $5, now()) returning ${COLUMNS}`,
    [newId("adt"), accountId, sha256Hex(token), token.slice(0, 8), name],
  );
  return { token, row: rows[0]! };
}

export function checkTokenName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) throw new AppError("validation_failed", "name must be 1 to 200 characters", { param: "name" });
  return trimmed;
}

/**
 * The token's id and account, or undefined. Read on every request (no cache), so a revoked
 * token fails on the very next request on every instance. `last_used_at` is written in the same
 * statement, at most about once a minute per token.
 */
export async function resolveAdminToken(db: pg.Pool, token: string): Promise<{ tokenId: string; accountId: string } | undefined> {
  const { rows } = await db.query<{ id: string; account_id: string }>(
    `with t as (select id, account_id, last_used_at from admin_tokens where token_hash = $1),
          u as (update admin_tokens set last_used_at = now() where id = (select id from t)
                 and (last_used_at is null or last_used_at < now() - interval '1 minute'))
     select id, account_id from t`,
    [sha256Hex(token)],
  );
  return rows[0] && { tokenId: rows[0].id, accountId: rows[0].account_id };
}

/** Returns the account id the token belongs to, or undefined. */
export async function authenticateAdminToken(db: pg.Pool, token: string): Promise<string | undefined> {
  return (await resolveAdminToken(db, token))?.accountId;
}

export async function tokenExists(db: pg.Pool, tokenId: string): Promise<boolean> {
  const { rowCount } = await db.query("select 1 from admin_tokens where id = $1", [tokenId]);
  return (rowCount ?? 0) > 0;
}

export async function listAdminTokens(db: pg.Pool, accountId: string): Promise<AdminTokenRow[]> {
  const { rows } = await db.query<AdminTokenRow>(`select ${COLUMNS} from admin_tokens where account_id = $1 order by created_at desc, id desc`, [accountId]);
  return rows;
}

/** Deletes the token and announces it in the same statement; false when unknown or foreign. */
export async function revokeAdminToken(db: pg.Pool, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `with d as (delete from admin_tokens where id = $1 and account_id = $2 returning id)
     select pg_notify('${ADMIN_TOKEN_REVOKED}', id) from d`,
    [id, accountId],
  );
  return (rowCount ?? 0) > 0;
}
