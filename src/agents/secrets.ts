import type { EntityManager } from "@mikro-orm/postgresql";
import type pg from "pg";
import { AgentSecret } from "../db/schema.js";
import { AppError } from "../errors/app-error.js";
import { decryptSecret, encryptSecret } from "../infra/crypto.js";
import { requireAgent } from "./service.js";

/** `ctx.secrets.NAME` values: sealed at rest (infra/crypto.ts); only names ever leave through an API. */

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MIN_VALUE = 8;
const MAX_VALUE = 8192;
const MAX_SECRETS = 50;

export async function setAgentSecret(em: EntityManager, key: Buffer, accountId: string, agentId: string, name: string, value: string): Promise<string[]> {
  await requireAgent(em, accountId, agentId);
  if (!NAME.test(name)) throw new AppError("validation_failed", "name must be 1 to 64 letters, digits or _ and not start with a digit", { param: "name" });
  // Short values would be redacted out of every text a run writes; real credentials are longer.
  if (value.length < MIN_VALUE || value.length > MAX_VALUE) throw new AppError("validation_failed", `value must be ${MIN_VALUE} to ${MAX_VALUE} characters`, { param: "value" });
  const existing = await em.findOne(AgentSecret, { agent: agentId, name });
  if (existing) existing.sealedValue = encryptSecret(value, key);
  else {
    if ((await em.count(AgentSecret, { agent: agentId })) >= MAX_SECRETS) throw new AppError("validation_failed", `an agent has at most ${MAX_SECRETS} secrets`, { param: "name" });
    em.create(AgentSecret, { agent: agentId, name, sealedValue: encryptSecret(value, key) });
  }
  await em.flush();
  return secretNames(em, agentId);
}

export async function deleteAgentSecret(em: EntityManager, accountId: string, agentId: string, name: string): Promise<boolean> {
  await requireAgent(em, accountId, agentId);
  return (await em.nativeDelete(AgentSecret, { agent: agentId, name })) > 0;
}

export async function secretNames(em: EntityManager, agentId: string): Promise<string[]> {
  const rows = await em.find(AgentSecret, { agent: agentId }, { orderBy: { name: "asc" } });
  return rows.map((r) => r.name);
}

/** For the run only: name → plaintext, decrypted in the worker that runs the script. */
export async function loadAgentSecrets(db: pg.Pool, key: Buffer, agentId: string): Promise<Record<string, string>> {
  const { rows } = await db.query<{ name: string; sealed_value: string }>("select name, sealed_value from agent_secrets where agent_id = $1", [agentId]);
  return Object.fromEntries(rows.map((r) => [r.name, decryptSecret(r.sealed_value, key)]));
}
