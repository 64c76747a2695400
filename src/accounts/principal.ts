import { unauthenticated, type GraphQLAuth } from "../graphql/context.js";
import { bearerToken } from "../http/auth.js";
import { safeEqual } from "../infra/crypto.js";
import type { Runtime } from "../runtime/runtime.js";
import { ADMIN_TOKEN_REVOKED, resolveAdminToken, tokenExists } from "./admin-tokens.js";

/**
 * GraphQL callers: the operator token, or an account's admin token (`adm_…`, looked up on every
 * request, so a revoked token fails at once on every instance). Every operation needs one.
 */
export function adminAuth(runtime: Runtime): GraphQLAuth {
  return {
    async resolvePrincipal(authorization) {
      const token = bearerToken(authorization);
      if (!token) throw unauthenticated("Missing credentials: send Authorization: Bearer <admin token>");
      if (safeEqual(token, runtime.config.operatorToken)) return { kind: "operator" };
      const found = token.startsWith("adm_") ? await resolveAdminToken(runtime.pool, token) : undefined;
      if (!found) throw unauthenticated("Invalid admin token");
      return { kind: "admin", ...found };
    },
    revokedTokenChannel: ADMIN_TOKEN_REVOKED,
    tokenExists: (tokenId) => tokenExists(runtime.pool, tokenId),
  };
}
