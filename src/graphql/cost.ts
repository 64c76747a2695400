import { GraphQLError, type DocumentNode, type GraphQLSchema } from "graphql";
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from "graphql-query-complexity";

/**
 * The query-cost limit (DESIGN §8, §14), beside the depth limit: a field costs 1, and a
 * connection's fields count once per row asked for (`first`, see connection.ts), so
 * `jobs(first: 200) { edges { node { thread { messages … } } } }` is priced by what it reads.
 * graphql-query-complexity does the counting; this module only sets the prices and the error.
 */
export const QUERY_TOO_COSTLY = "QUERY_TOO_COSTLY";

export function queryCost(schema: GraphQLSchema, query: DocumentNode, variables: Record<string, unknown> | undefined, operationName?: string | null): number {
  return getComplexity({
    schema,
    query,
    variables: variables ?? {},
    operationName: operationName ?? undefined,
    estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
  });
}

/** Undefined when the operation is within the limit, else the error to answer with (HTTP 400). */
export function costLimitError(
  schema: GraphQLSchema,
  limit: number,
  query: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName?: string | null,
): GraphQLError | undefined {
  let cost: number;
  try {
    cost = queryCost(schema, query, variables, operationName);
  } catch {
    return undefined; // an invalid operation: validation or execution reports it in its own words
  }
  if (cost <= limit) return undefined;
  return new GraphQLError(
    `Query cost ${cost} exceeds the limit of ${limit} (GRAPHQL_MAX_COST): ask for fewer rows (first) or fewer nested fields`,
    { extensions: { code: QUERY_TOO_COSTLY, cost, limit, http: { status: 400 } } },
  );
}
