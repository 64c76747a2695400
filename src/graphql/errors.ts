import type { GraphQLFormattedError } from "graphql";
import { AppError } from "../errors/app-error.js";
import { unavailableError } from "../errors/unavailable.js";
import { unstorableTextError } from "../errors/unstorable.js";
import type { Logger } from "../infra/logger.js";

interface GraphQLErrorLike {
  message: string;
  originalError?: unknown;
  locations?: unknown;
}
const isGraphQLError = (e: unknown): e is GraphQLErrorLike =>
  typeof e === "object" && e !== null && (e as Error).name === "GraphQLError";

/** Maps any resolver error to what clients see: AppError by its code, anything unknown as a bare 500. */
export function formatGraphQLError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    // Duck-typed: Apollo and type-graphql may load graphql's CJS build and we its ESM build, and
    // then `instanceof GraphQLError` is false for their errors.
    let original: unknown = error;
    while (isGraphQLError(original) && original.originalError) original = original.originalError;
    original = unstorableTextError(original) ?? unavailableError(original) ?? original;
    if (original instanceof AppError) {
      return {
        message: original.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: original.graphqlCode, reason: original.code, ...(original.param ? { param: original.param } : {}), ...original.details },
      };
    }
    if (isGraphQLError(original) || (formatted.extensions?.code && formatted.extensions.code !== "INTERNAL_SERVER_ERROR")) {
      // Parse/validation/auth errors made by graphql or Apollo: already safe to show; drop stack traces.
      const { stacktrace: _s, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    log.error({ err: original }, "graphql resolver failed");
    return { message: "Internal server error", locations: formatted.locations, path: formatted.path, extensions: { code: "INTERNAL_SERVER_ERROR" } };
  };
}
