import type { EntityManager } from "@mikro-orm/postgresql";
import { GraphQLError } from "graphql";
import { AppError } from "../errors/app-error.js";
import { safeEqual } from "../infra/crypto.js";
import type { Runtime } from "../runtime/runtime.js";
import { resolveAdminToken } from "../accounts/admin-tokens.js";
import { bearerToken } from "../http/auth.js";

export type Principal = { kind: "admin"; accountId: string; tokenId: string } | { kind: "operator" };

export interface GraphQLContext {
  runtime: Runtime;
  principal: Principal;
  /** A request-scoped entity manager (MikroORM identity map per request). */
  em: EntityManager;
}

function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "UNAUTHENTICATED", http: { status: 401 } } });
}

/**
 * Resolves the caller from an Authorization header value (HTTP header or graphql-ws
 * `connectionParams.authorization`). Every GraphQL operation requires a valid token.
 */
export async function resolvePrincipal(runtime: Runtime, authorization: string | undefined): Promise<Principal> {
  const token = bearerToken(authorization);
  if (!token) throw unauthenticated("Missing credentials: send Authorization: Bearer <admin token>");
  if (safeEqual(token, runtime.config.operatorToken)) return { kind: "operator" };
  const found = token.startsWith("adm_") ? await resolveAdminToken(runtime.pool, token) : undefined;
  if (!found) throw unauthenticated("Invalid admin token");
  return { kind: "admin", ...found };
}

export async function buildContext(runtime: Runtime, authorization: string | undefined): Promise<GraphQLContext> {
  const principal = await resolvePrincipal(runtime, authorization);
  return { runtime, principal, em: runtime.orm.em.fork() };
}

/** The caller's account; the operator has none (it manages accounts, it does not own one). */
export function accountOf(ctx: GraphQLContext): string {
  if (ctx.principal.kind !== "admin") throw new AppError("forbidden", "This operation needs an account admin token, not the operator token");
  return ctx.principal.accountId;
}

export function requireOperator(ctx: GraphQLContext): void {
  if (ctx.principal.kind !== "operator") throw new AppError("forbidden", "This operation needs the operator token");
}
