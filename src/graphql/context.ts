import type { EntityManager } from "@mikro-orm/postgresql";
import { GraphQLError } from "graphql";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";

export type Principal = { kind: "admin"; accountId: string; tokenId: string } | { kind: "operator" };

export interface GraphQLContext {
  runtime: Runtime;
  principal: Principal;
  /** A request-scoped entity manager (MikroORM identity map per request). */
  em: EntityManager;
}

/** 401 with a GraphQL error body (`UNAUTHENTICATED`). */
export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "UNAUTHENTICATED", http: { status: 401 } } });
}

/**
 * Who may call the API and how a revoked credential is noticed; provided by accounts/
 * (src/accounts/principal.ts) and handed in by the composition root, so this folder stays below
 * the capabilities that use it.
 */
export interface GraphQLAuth {
  /**
   * The caller of an Authorization header value (HTTP header or graphql-ws
   * `connectionParams.authorization`); throws `unauthenticated`.
   */
  resolvePrincipal(authorization: string | undefined): Promise<Principal>;
  /** Event channel announcing the id of a revoked admin token (open sockets of it are closed). */
  revokedTokenChannel: string;
  /** Whether an admin token still exists (checked again before each new socket operation). */
  tokenExists(tokenId: string): Promise<boolean>;
}

export async function buildContext(runtime: Runtime, auth: GraphQLAuth, authorization: string | undefined): Promise<GraphQLContext> {
  const principal = await auth.resolvePrincipal(authorization);
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
