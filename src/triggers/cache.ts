import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";
import { decryptSecret } from "../infra/crypto.js";
import type { StoredSecret } from "./secrets.js";

/**
 * A short-lived per-process cache of what the webhook hot path needs about a trigger: owner,
 * flags and decrypted secrets. Changes made anywhere are announced on `trigger_changed`
 * (LISTEN/NOTIFY) and evict the entry at once; the TTL bounds staleness for a missed notification.
 * Account settings are not cached: webhook authentication reads them at request time
 * (`relaxesSignatureTimestamp`).
 */
export interface CachedTrigger {
  id: string;
  accountId: string;
  agentId: string;
  active: boolean;
  secretRequired: boolean;
  secrets: StoredSecret[];
}

const TTL_MS = 5000;
const MISS_TTL_MS = 1000;
const MAX_ENTRIES = 50_000;

export class TriggerCache {
  private readonly entries = new Map<string, { value: CachedTrigger | null; expires: number }>();
  private readonly loading = new Map<string, Promise<CachedTrigger | null>>();
  private generation = 0;

  constructor(private readonly runtime: Runtime) {}

  async get(id: string): Promise<CachedTrigger | null> {
    const hit = this.entries.get(id);
    if (hit && hit.expires > Date.now()) return hit.value;
    let p = this.loading.get(id);
    if (!p) {
      const gen = this.generation;
      p = this.load(id)
        .then((value) => {
          // An invalidation that raced the load wins: do not cache what may be stale.
          if (gen === this.generation) {
            if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
            this.entries.set(id, { value, expires: Date.now() + (value ? TTL_MS : MISS_TTL_MS) });
          }
          return value;
        })
        .finally(() => this.loading.delete(id));
      this.loading.set(id, p);
    }
    return p;
  }

  invalidate(id: string): void {
    this.generation++;
    this.entries.delete(id);
  }

  /** Forgets every trigger of an account (its settings changed). */
  private async load(id: string): Promise<CachedTrigger | null> {
    // Trigger ids are `trg_` + base62; anything else cannot exist, so skip the query.
    if (!/^trg_[0-9A-Za-z]{1,64}$/.test(id)) return null;
    const { rows } = await this.runtime.pool.query<{
      id: string;
      account_id: string;
      agent_id: string;
      active: boolean;
      secret_required: boolean;
      secrets: { s: string; e: string | null }[] | null;
    }>(
      `select t.id, t.account_id, t.agent_id, t.active, t.secret_required,
         (select json_agg(json_build_object('s', s.sealed_secret, 'e', s.expires_at) order by s.expires_at desc nulls first)
            from trigger_secrets s where s.trigger_id = t.id) as secrets
       from triggers t where t.id = $1`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    const key = this.runtime.config.secretEncryptionKey;
    return {
      id: r.id,
      accountId: r.account_id,
      agentId: r.agent_id,
      active: r.active,
      secretRequired: r.secret_required,
      secrets: (r.secrets ?? []).map((s) => ({ secret: decryptSecret(s.s, key), expiresAt: s.e ? Date.parse(s.e) : null })),
    };
  }
}

/** Channel that tells every instance's cache to forget a trigger. */
export const TRIGGER_CHANGED = "trigger_changed";

/** The process's trigger cache for this runtime; it listens for changes from every instance. */
export const triggerCache = perRuntime(
  (runtime) => new TriggerCache(runtime),
  // PgEvents.subscribe never rejects: a LISTEN lost with its connection is issued again on reconnect.
  (cache, runtime) => void runtime.events.subscribe(TRIGGER_CHANGED, (id) => cache.invalidate(id)),
);

/** Announces a change of a trigger: evicted in this process at once, in the others when the NOTIFY arrives. */
export async function announceTriggerChange(runtime: Runtime, triggerId: string): Promise<void> {
  triggerCache.peek(runtime)?.invalidate(triggerId);
  await runtime.events.publish(TRIGGER_CHANGED, triggerId).catch((err) => runtime.log.warn({ err }, "trigger change notification failed"));
}
