import { ArgsType, Field, Int, ObjectType, type ClassType } from "type-graphql";
import type { ComplexityEstimatorArgs } from "graphql-query-complexity";
import { AppError } from "../errors/app-error.js";
import { decodeCursor, encodeCursor } from "./cursor.js";

export { decodeCursor, encodeCursor };

/**
 * Relay connections (docs/guides/graphql.md): `edges { cursor node }`, `pageInfo { hasNextPage endCursor }`,
 * `first` default 50, max 200. Cursors are opaque (base64url JSON of the row's sort key), and every
 * list is read by keyset (`(sort key) < cursor`), so a page is stable while rows are added.
 */
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

@ObjectType("PageInfo")
export class PageInfo {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true, description: "Pass as `after` for the next page" }) endCursor!: string | null;
}

@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: `Page size, default ${DEFAULT_PAGE}, at most ${MAX_PAGE}` }) first?: number | null;
  @Field(() => String, { nullable: true, description: "The endCursor of the previous page" }) after?: string | null;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}
export interface Connection<T> {
  edges: Edge<T>[];
  pageInfo: PageInfo;
}

/** The page size asked for, checked: bad input is a BAD_USER_INPUT naming `first`, never a 500. */
export function pageSize(first: number | null | undefined): number {
  if (first == null) return DEFAULT_PAGE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE) {
    throw new AppError("validation_failed", `first must be between 0 and ${MAX_PAGE}`, { param: "first" });
  }
  return first;
}

/** Builds a connection from up to `first + 1` rows read in order (the extra row only says there is more). */
export function toConnection<R, T>(rows: R[], first: number, key: (row: R) => readonly (string | number)[], node: (row: R) => T): Connection<T> {
  const page = rows.slice(0, first);
  const edges = page.map((r) => ({ cursor: encodeCursor(key(r)), node: node(r) }));
  return { edges, pageInfo: Object.assign(new PageInfo(), { hasNextPage: rows.length > first, endCursor: edges.at(-1)?.cursor ?? null }) };
}

/**
 * Query-cost estimate of a connection field: its children, once per requested row. A `first` out
 * of range throws here, so the cost check steps aside and the resolver answers BAD_USER_INPUT
 * naming `first` (priced at the maximum, a page of large fields would be refused as too costly
 * instead, which says nothing about what was wrong).
 */
export const connectionComplexity = ({ args, childComplexity }: ComplexityEstimatorArgs): number => {
  const first = pageSize(typeof args.first === "number" ? args.first : null);
  return 1 + childComplexity * Math.max(first, 1);
};

/** `XEdge` and `XConnection` object types for a node type. */
export function connectionOf<T extends object>(name: string, node: ClassType<T>) {
  @ObjectType(`${name}Edge`)
  class EdgeType {
    @Field(() => String) cursor!: string;
    @Field(() => node) node!: T;
  }
  @ObjectType(`${name}Connection`)
  class ConnectionType {
    @Field(() => [EdgeType]) edges!: EdgeType[];
    @Field(() => PageInfo) pageInfo!: PageInfo;
  }
  return ConnectionType as ClassType<Connection<T>>;
}

/**
 * Keyset on (created_at, id), newest first. Timestamps travel in cursors as whole microseconds
 * since the epoch, so a page boundary never falls between two rows created in the same millisecond.
 */
export const CREATED_CURSOR = ["number", "string"] as const;
export const createdCursorColumn = (table: string) => `(extract(epoch from ${table}.created_at) * 1000000)::bigint as "cursorUs"`;
export const createdBefore = (table: string, usParam: number, idParam: number) =>
  `(${table}.created_at, ${table}.id) < (timestamptz 'epoch' + $${usParam}::bigint * interval '1 microsecond', $${idParam}::text)`;
