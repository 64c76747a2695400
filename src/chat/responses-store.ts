import type pg from "pg";
import { sqlNames } from "../db/names.js";
import { ApiKey, StoredResponse } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { keyDeleted, keyExpired } from "../keys/refusal.js";

const R = sqlNames(StoredResponse);
const K = sqlNames(ApiKey);

/** The stored Responses API objects (table `responses`): GET by id and previous_response_id → its thread. */

export async function saveResponse(pool: pg.Pool, r: { id: string; accountId: string; agentId: string; threadId: string; body: Record<string, unknown> }): Promise<void> {
  await pool.query({
    name: "response-save",
    text: "insert into responses (id, account_id, agent_id, thread_id, body, created_at) values ($1, $2, $3, $4, $5, now())",
    values: [r.id, r.accountId, r.agentId, r.threadId, JSON.stringify(r.body)],
  });
}

/**
 * A response of this agent, or 404 (another agent's responses do not exist for this key). With
 * `keyId` (a read by that key) the same statement checks the key still exists, as the chat hold
 * does: a deleted key fails on the very next request even where its cached principal is stale.
 */
export async function loadResponse(
  pool: pg.Pool,
  id: string,
  owner: { accountId: string; agentId: string; keyId?: string },
  param?: string,
): Promise<{ threadId: string; body: Record<string, unknown> }> {
  const notFound = () => new AppError("not_found", `Response with id '${id}' not found.`, param ? { param } : {});
  const validId = /^resp_[0-9A-Za-z]{1,64}$/.test(id);
  // Only our own id shape can exist; anything else (a NUL byte would make PostgreSQL refuse the query) is simply unknown.
  if (!validId && !owner.keyId) throw notFound();
  const { rows } = await pool.query<{ key_live: boolean; key_expired_at: Date | null; thread_id: string | null; body: Record<string, unknown> | null }>({
    name: "response-load",
    text: `select ($4::text is null or exists (select 1 from ${K.table} where ${K.id} = $4)) as key_live,
                    (select ${K.expiresAt} from ${K.table} where ${K.id} = $4 and ${K.expiresAt} <= now()) as key_expired_at,
                    r.${R.thread} as thread_id, r.${R.body} as body
             from (select 1) one
             left join ${R.table} r on r.${R.id} = $1 and r.${R.account} = $2 and r.${R.agent} = $3`,
    values: [validId ? id : null, owner.accountId, owner.agentId, owner.keyId ?? null],
  });
  const row = rows[0]!;
  if (!row.key_live) throw keyDeleted();
  if (row.key_expired_at) throw keyExpired(row.key_expired_at);
  if (!row.body) throw notFound();
  return { threadId: row.thread_id!, body: row.body };
}
