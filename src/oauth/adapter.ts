import type { Adapter, AdapterPayload } from "oidc-provider";
import { sha256Hex } from "../infra/crypto.js";
import { isStorableText } from "../infra/text.js";
import { sqlNames } from "../db/names.js";
import { OAuthModel } from "../db/schema.js";
import type { Runtime } from "../runtime/runtime.js";
import { revokeOAuthKeyOfGrant } from "./keys.js";

/**
 * oidc-provider's storage (its `Adapter` interface) on PostgreSQL, the `oauth_models` table, so
 * every API instance sees the same grants, codes and tokens. Tokens and codes are stored under the
 * SHA-256 of their value: a database dump yields no usable credential. `Client` rows of dynamic
 * registration live here too; a URL `client_id` (a Client ID Metadata Document) is resolved by
 * `resolveClientUrl` instead of a row.
 */
const T = sqlNames(OAuthModel);

/** Models whose id is a bearer credential: stored hashed. */
const HASHED = new Set(["AccessToken", "RefreshToken", "AuthorizationCode", "RegistrationAccessToken", "ClientCredentials"]);

export interface AdapterDeps {
  runtime: Runtime;
  /** A `client_id` that is a URL: its metadata document, or undefined when it is not one. */
  resolveClientUrl(id: string): Promise<AdapterPayload | undefined>;
}

export function pgAdapterFactory(deps: AdapterDeps) {
  return (name: string): Adapter => new PgAdapter(name, deps);
}

class PgAdapter implements Adapter {
  constructor(
    private readonly kind: string,
    private readonly deps: AdapterDeps,
  ) {}

  private key(id: string): string {
    return HASHED.has(this.kind) ? sha256Hex(id) : id;
  }

  private get pool() {
    return this.deps.runtime.pool;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    const grantId = payload.grantId ?? (this.kind === "Grant" ? id : null);
    await this.pool.query(
      `insert into ${T.table} (${T.kind}, ${T.id}, ${T.payload}, ${T.grantId}, ${T.uid}, ${T.expiresAt}) values ($1, $2, $3, $4, $5, $6)
       on conflict (${T.kind}, ${T.id}) do update set ${T.payload} = excluded.${T.payload}, ${T.grantId} = excluded.${T.grantId}, ${T.uid} = excluded.${T.uid}, ${T.expiresAt} = excluded.${T.expiresAt}`,
      [this.kind, this.key(id), JSON.stringify(payload), grantId, payload.uid ?? null, expiresAt],
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    // Text PostgreSQL cannot hold (a NUL) names nothing stored: not found, not a failed statement.
    if (typeof id !== "string" || id.length > 2000 || !isStorableText(id)) return undefined;
    if (this.kind === "Client" && /^https?:\/\//i.test(id)) return this.deps.resolveClientUrl(id);
    if (id.length > 255) return undefined;
    const { rows } = await this.pool.query<{ payload: AdapterPayload; consumed: boolean }>(
      `select ${T.payload} as payload, ${T.consumedAt} is not null as consumed from ${T.table}
        where ${T.kind} = $1 and ${T.id} = $2 and (${T.expiresAt} is null or ${T.expiresAt} > now())`,
      [this.kind, this.key(id)],
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed ? { ...row.payload, consumed: true } : row.payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (typeof uid !== "string" || !isStorableText(uid)) return undefined;
    const { rows } = await this.pool.query<{ payload: AdapterPayload }>(
      `select ${T.payload} as payload from ${T.table} where ${T.kind} = $1 and ${T.uid} = $2 and (${T.expiresAt} is null or ${T.expiresAt} > now())`,
      [this.kind, uid],
    );
    return rows[0]?.payload;
  }

  async findByUserCode(): Promise<AdapterPayload | undefined> {
    return undefined; // no device flow
  }

  async consume(id: string): Promise<void> {
    await this.pool.query(`update ${T.table} set ${T.consumedAt} = now() where ${T.kind} = $1 and ${T.id} = $2`, [this.kind, this.key(id)]);
  }

  async destroy(id: string): Promise<void> {
    await this.pool.query(`delete from ${T.table} where ${T.kind} = $1 and ${T.id} = $2`, [this.kind, this.key(id)]);
  }

  /**
   * Everything of a grant goes at once (a refresh token replayed, a code reused, a revocation):
   * its tokens, the grant, and the agent key it is (so its listing and its cache go too).
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.pool.query(`delete from ${T.table} where ${T.grantId} = $1`, [grantId]);
    await revokeOAuthKeyOfGrant(this.deps.runtime, grantId);
  }
}

/** Deletes rows whose time is over (called periodically, not per request). */
export async function sweepOAuthModels(runtime: Runtime): Promise<void> {
  await runtime.pool.query(`delete from ${T.table} where ${T.expiresAt} < now() - interval '1 hour'`);
}
