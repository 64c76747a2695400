import { GraphQLError, type DocumentNode, type GraphQLSchema } from "graphql";
import { fieldExtensionsEstimator, getComplexity, simpleEstimator, type ComplexityEstimator } from "graphql-query-complexity";
import { Extensions } from "type-graphql";
import type { Config } from "../config/config.js";

/**
 * The query-cost limit (docs/guides/graphql.md), beside the depth limit: a field costs 1, and a
 * connection's fields count once per row asked for (`first`, see connection.ts), so
 * `jobs(first: 200) { edges { node { thread { messages … } } } }` is priced by what it reads.
 * A field that can hold a large value (a run's result or logs, a webhook payload, a message, a
 * script) carries its weight: 1 per COST_BYTES_PER_UNIT of the most it may hold (`weighs`), so
 * GRAPHQL_MAX_COST also bounds the bytes one operation can make the server read and send
 * (20,000 × 16 KiB ≈ 312 MiB at the defaults, whatever the rows hold), not only the rows.
 * graphql-query-complexity does the counting; this module only sets the prices and the error.
 */
export const QUERY_TOO_COSTLY = "QUERY_TOO_COSTLY";

/** Bytes one unit of cost stands for, on a field marked with `weighs`. */
export const COST_BYTES_PER_UNIT = 16 * 1024;

/** The most one value of a field may hold: bytes, or read from the configuration (SCRIPT_MAX_RESULT_BYTES…). */
export type MaxBytes = number | ((config: Config) => number);

/** Marks a field whose value may be large: it costs 1 + maxBytes / COST_BYTES_PER_UNIT (rounded up). */
export const weighs = (maxBytes: MaxBytes) => Extensions({ maxBytes });

/** Prices a `weighs` field by its maximum size; other fields are left to the next estimator. */
function maxBytesEstimator(config: Config): ComplexityEstimator {
  return ({ field }) => {
    const max = field.extensions?.maxBytes as MaxBytes | undefined;
    if (max === undefined) return undefined;
    const bytes = typeof max === "function" ? max(config) : max;
    return 1 + Math.ceil(bytes / COST_BYTES_PER_UNIT);
  };
}

export function queryCost(
  schema: GraphQLSchema,
  query: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | null | undefined,
  config: Config,
): number {
  return getComplexity({
    schema,
    query,
    variables: variables ?? {},
    operationName: operationName ?? undefined,
    estimators: [maxBytesEstimator(config), fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
  });
}

/** Undefined when the operation is within the limit, else the error to answer with (HTTP 400). */
export function costLimitError(
  schema: GraphQLSchema,
  config: Config,
  query: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName?: string | null,
): GraphQLError | undefined {
  const limit = config.graphqlMaxCost;
  let cost: number;
  try {
    cost = queryCost(schema, query, variables, operationName, config);
  } catch {
    return undefined; // an invalid operation: validation or execution reports it in its own words
  }
  if (cost <= limit) return undefined;
  return new GraphQLError(
    `Query cost ${cost} exceeds the limit of ${limit} (GRAPHQL_MAX_COST): ask for fewer rows (first) or fewer nested or large fields (results, logs, payloads, messages)`,
    { extensions: { code: QUERY_TOO_COSTLY, cost, limit, http: { status: 400 } } },
  );
}
