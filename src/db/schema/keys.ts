import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { agentOwned } from "./agent-owned.js";

/** API keys: an `a2a_` secret or an OAuth consent (src/keys). */

export const ApiKey = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    ...agentOwned(),
    name: p.string().length(200),
    keyHash: p.string().length(64).unique(),
    prefix: p.string().length(16),
    last4: p.string().length(4),
    rateLimitPerMinute: p.integer().nullable(),
    /** From this instant on the key answers 401; null: never. */
    expiresAt: p.datetime().nullable(),
    /** The most the key may spend per `spendLimitPeriod` (DAY, MONTH, TOTAL; UTC); null: no limit. */
    spendLimitMicros: p.bigint("number").nullable(),
    spendLimitPeriod: p.string().length(10).nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    /** SECRET: an `a2a_` key; OAUTH: a consent given to an OAuth client (docs/design/oauth.md), its tokens resolved to this row. */
    kind: p.string().length(10).default("SECRET"),
    /** OAUTH: the client's `client_name` (or its redirect host) and `client_id` as consented. */
    clientName: p.string().length(200).nullable(),
    clientId: p.text().nullable(),
    /** OAUTH: the authorization server's grant (src/oauth); deleting the key revokes it. */
    grantId: p.string().length(100).nullable().unique(),
  },
});
export type IApiKey = InferEntity<typeof ApiKey>;
