import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** The OAuth authorization server's storage (src/oauth). */

/**
 * What the OAuth authorization server (oidc-provider, src/oauth) stores: one row per model
 * instance (its `kind`: Grant, Session, Interaction, AuthorizationCode, AccessToken, RefreshToken,
 * Client, …), shared by every API instance. Token and code ids are stored as SHA-256 hashes.
 */
export const OAuthModel = defineEntity({
  name: "OAuthModel",
  tableName: "oauth_models",
  properties: {
    kind: p.string().length(40).primary(),
    id: p.string().length(255).primary(),
    payload: p.json<Record<string, unknown>>(),
    grantId: p.string().length(100).nullable().index(),
    uid: p.string().length(100).nullable().index(),
    expiresAt: p.datetime().nullable().index(),
    consumedAt: p.datetime().nullable(),
  },
  primaryKeys: ["kind", "id"],
});
export type IOAuthModel = InferEntity<typeof OAuthModel>;
