import { sqlNames } from "../db/names.js";
import { ApiKey } from "../db/schema.js";
import { sha256Hex } from "../infra/crypto.js";
import { newId } from "../infra/ids.js";
import type { Runtime } from "../runtime/runtime.js";
import { KEY_EVENTS_CHANNEL } from "../keys/service.js";

/**
 * A consent is a key of the agent (docs/design/oauth.md): a row of `api_keys` of kind OAUTH that carries the
 * grant id. Access tokens of the grant resolve to this row (src/keys/auth.ts), so the key's
 * expiry, limits, usage, audit and last-used apply unchanged; deleting it revokes the grant.
 * Its `key_hash` is the hash of a string no `a2a_` key can be: no secret authenticates as it.
 */
const K = sqlNames(ApiKey);

export interface ConsentKey {
  accountId: string;
  agentId: string;
  grantId: string;
  clientId: string;
  clientName: string;
}

export class AgentGone extends Error {
  constructor() {
    super("the agent of the consent is gone");
  }
}

export async function createOAuthKey(runtime: Runtime, c: ConsentKey): Promise<string> {
  const id = newId("key");
  const name = `${c.clientName} (OAuth)`.slice(0, 200);
  const { rowCount } = await runtime.pool.query(
    `insert into ${K.table} (${K.id}, ${K.account}, ${K.agent}, ${K.name}, ${K.keyHash}, ${K.prefix}, ${K.last4}, ${K.kind}, ${K.clientName}, ${K.clientId}, ${K.grantId}, ${K.createdAt})
     select $1, a.account_id, a.id, $4, $5, 'oauth', '', 'OAUTH', $6, $7, $8, now() from agents a where a.id = $3 and a.account_id = $2`,
    [id, c.accountId, c.agentId, name, sha256Hex(`oauth-grant:${c.grantId}`), c.clientName.slice(0, 200), c.clientId, c.grantId],
  );
  if (!rowCount) throw new AgentGone();
  return id;
}

/** The OAUTH key of a revoked grant goes too, announced like any deleted key. */
export async function revokeOAuthKeyOfGrant(runtime: Runtime, grantId: string): Promise<void> {
  const { rows } = await runtime.pool.query<{ id: string }>(`delete from ${K.table} where ${K.grantId} = $1 returning ${K.id} as id`, [grantId]);
  for (const r of rows) await runtime.events.publish(KEY_EVENTS_CHANNEL, r.id);
}
