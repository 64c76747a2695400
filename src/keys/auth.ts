import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { sha256Hex } from "../infra/crypto.js";
import { bearerToken } from "../http/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import type { AgentInfo } from "../agents/agent-info.js";
import { KEY_EVENTS_CHANNEL } from "./service.js";
import { invalidAccessToken, keyDeleted, keyExpired, notAKey } from "./refusal.js";
import { sqlNames } from "../db/names.js";
import { ApiKey, OAuthModel } from "../db/schema.js";

const K = sqlNames(ApiKey);
const T = sqlNames(OAuthModel);

/**
 * API-key authentication for the chat hot path. Lookups are cached in memory; an entry is evicted
 * when PostgreSQL NOTIFY announces a change of its key (delete, new limit) or account, and agent
 * fields are refreshed after a short TTL. The cache is an optimisation only: the hold re-checks
 * that the key still exists and has not expired in the same statement, so a deleted or expired key
 * can never be used; a cached expiry is compared with the clock at every use.
 */
export interface KeyPrincipal {
  keyId: string;
  agent: AgentInfo;
  rateLimitPerMinute: number;
  /** The key's agent has a script (an automation agent); refreshed with the agent fields. */
  automation: boolean;
}

interface Entry {
  principal: KeyPrincipal;
  /** Compared at every use, so a cached key stops working at its expiry instant on every instance. */
  expiresAt: number | null;
  hash: string;
  accountId: string;
  loadedAt: number;
}

const AGENT_TTL_MS = 5_000;
const LAST_USED_EVERY_MS = 60_000;
const MAX_ENTRIES = 50_000;

export class KeyAuthenticator {
  private readonly byHash = new Map<string, Entry>();
  private readonly lastUsedWrite = new Map<string, number>();
  private ready: Promise<unknown>;

  constructor(private readonly runtime: Runtime) {
    this.ready = runtime.events.subscribe(KEY_EVENTS_CHANNEL, (payload) => this.evict(payload));
  }

  private evict(payload: string): void {
    const accountId = payload.startsWith("account:") ? payload.slice(8) : undefined;
    for (const [hash, e] of this.byHash) {
      if (e.principal.keyId === payload || e.accountId === accountId) this.byHash.delete(hash);
    }
  }

  /**
   * Reads `Authorization: Bearer` or `X-API-Key`; throws 401 invalid_api_key. `fresh` skips the
   * cache, for routes with no later database check of the key (the models list): a NOTIFY of a
   * deletion may still be in flight, and a deleted key must fail on the very next request.
   */
  async authenticate(authorization: string | undefined, xApiKey: string | undefined, options: { fresh?: boolean; oauth?: boolean } = {}): Promise<KeyPrincipal> {
    const token = xApiKey?.trim() || bearerToken(authorization);
    if (!token) throw new AppError("invalid_api_key", "Missing API key: send Authorization: Bearer <key> or X-API-Key: <key>");
    if (options.oauth && !xApiKey && isOAuthToken(token)) return this.authenticateAccessToken(token);
    if (!token.startsWith("a2a_") || token.length > 200) throw notAKey(token);
    await this.ready;
    const hash = sha256Hex(token);
    const now = Date.now();
    let entry = this.byHash.get(hash);
    if (!entry || options.fresh || now - entry.loadedAt > AGENT_TTL_MS) {
      entry = await load(this.runtime.pool, hash, this.runtime.config.defaultRateLimitPerMinute);
      if (!entry) {
        this.byHash.delete(hash);
        throw notAKey(token);
      }
      if (this.byHash.size >= MAX_ENTRIES) this.byHash.clear();
      this.byHash.set(hash, entry);
    }
    if (entry.expiresAt !== null && entry.expiresAt <= now) {
      // Expired as far as this cache knows: ask the database before refusing, so a key whose
      // expiry was just extended works at once even while the NOTIFY is still on its way.
      const current = options.fresh ? entry : await load(this.runtime.pool, hash, this.runtime.config.defaultRateLimitPerMinute);
      if (!current) throw keyDeleted();
      this.byHash.set(hash, current);
      if (current.expiresAt !== null && current.expiresAt <= now) throw keyExpired(new Date(current.expiresAt));
      entry = current;
    }
    this.touch(entry.principal.keyId, now);
    return entry.principal;
  }

  /**
   * An OAuth access token (docs/design/oauth.md) is a credential of its consent's key: looked up with that
   * key on every request (no cache, so a revoked token or deleted key fails at once on every
   * instance), then the same checks as an `a2a_` key (expiry, last used; limits downstream).
   */
  private async authenticateAccessToken(token: string): Promise<KeyPrincipal> {
    const entry = await load(this.runtime.pool, sha256Hex(token), this.runtime.config.defaultRateLimitPerMinute, "oauth");
    if (!entry) throw invalidAccessToken();
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) throw keyExpired(new Date(entry.expiresAt));
    this.touch(entry.principal.keyId, Date.now());
    return entry.principal;
  }

  /** lastUsedAt at most once a minute per key: fire-and-forget, and conditional across instances. */
  private touch(keyId: string, now: number): void {
    const last = this.lastUsedWrite.get(keyId);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWrite.set(keyId, now);
    this.runtime.pool
      .query("update api_keys set last_used_at = now() where id = $1 and (last_used_at is null or last_used_at < now() - interval '60 seconds')", [keyId])
      .catch((err) => this.runtime.log.warn({ err }, "could not record key use"));
  }
}

export { keyExpired };

/** What an OAuth access token looks like here (oidc-provider's opaque tokens): no prefix of ours. */
const isOAuthToken = (token: string) => token.length >= 20 && token.length <= 200 && /^[A-Za-z0-9_-]+$/.test(token) && !/^(a2a|adm|opr)_/.test(token);

/** The key row of `hash`: an `a2a_` key's hash, or (`oauth`) a live access token's, through its grant. */
const OAUTH_KEY = `k.${K.grantId} = (select t.${T.grantId} from ${T.table} t where t.${T.kind} = 'AccessToken' and t.${T.id} = $1
                     and t.${T.consumedAt} is null and t.${T.expiresAt} > now())`;

async function load(pool: pg.Pool, hash: string, installationDefault: number, by: "key" | "oauth" = "key"): Promise<Entry | undefined> {
  const { rows } = await pool.query<{
    id: string;
    account_id: string;
    agent_id: string;
    limit: number | null;
    instructions: string;
    default_model: string;
    allowed_models: string[] | null;
    fallback_models: string[] | null;
    expires_at: Date | null;
    automation: boolean;
  }>(
    `select k.id, k.account_id, k.agent_id, k.expires_at, coalesce(k.rate_limit_per_minute, acc.default_rate_limit_per_minute) as limit,
            a.instructions, a.default_model, a.allowed_models, a.fallback_models,
            a.script is not null as automation
       from api_keys k join agents a on a.id = k.agent_id join accounts acc on acc.id = k.account_id
      where ${by === "oauth" ? OAUTH_KEY : "k.key_hash = $1"}`,
    [hash],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    hash,
    accountId: r.account_id,
    expiresAt: r.expires_at ? r.expires_at.getTime() : null,
    loadedAt: Date.now(),
    principal: {
      keyId: r.id,
      rateLimitPerMinute: r.limit ?? installationDefault,
      automation: r.automation,
      agent: { id: r.agent_id, accountId: r.account_id, instructions: r.instructions, defaultModel: r.default_model, allowedModels: r.allowed_models, fallbackModels: r.fallback_models },
    },
  };
}
