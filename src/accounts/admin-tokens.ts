import type pg from "pg";
import { sha256Hex } from "../infra/crypto.js";
import { newId, randomToken } from "../infra/ids.js";

/** Admin tokens (`adm_…`): shown once at creation; only the SHA-256 hash is stored. */
export async function issueAdminToken(db: pg.Pool | pg.PoolClient, accountId: string): Promise<string> {
  const token = randomToken("adm");
  await db.query("insert into admin_tokens (id, account_id, token_hash, prefix, created_at) values ($1, $2, $3, $4, now())", [
    newId("adt"),
    accountId,
    sha256Hex(token),
    token.slice(0, 8),
  ]);
  return token;
}

/** Returns the account id the token belongs to, or undefined. */
export async function authenticateAdminToken(db: pg.Pool, token: string): Promise<string | undefined> {
  const { rows } = await db.query<{ account_id: string }>("select account_id from admin_tokens where token_hash = $1", [sha256Hex(token)]);
  return rows[0]?.account_id;
}
