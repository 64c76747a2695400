/**
 * Hand-written SQL composed from fragments with named parameters. A fragment asks for a
 * parameter by name (`p("accountId")`) and gets its `$n`; the statement maps named values to
 * positions once per call. So a fragment (the hold, the rate-limit upsert) is written once and
 * can run alone or inside a larger statement, and nobody counts `$8`–`$11` by hand.
 * The text is fixed when the module loads: statements stay prepared (`name`) per connection.
 */
export type Param = (name: string) => string;

export interface Statement {
  readonly name: string;
  readonly text: string;
  /** The query config for `pool.query`: the values in parameter order. */
  with(values: Record<string, unknown>): { name: string; text: string; values: unknown[] };
}

const names = new Map<string, string>();
/** Every statement built so far, text → name: how bench/capacity.ts names what pg_stat_statements saw. */
export const statementNames = (): ReadonlyMap<string, string> => names;

export function statement(name: string, build: (p: Param) => string): Statement {
  const order: string[] = [];
  const p: Param = (param) => {
    let i = order.indexOf(param);
    if (i < 0) i = order.push(param) - 1;
    return `$${i + 1}`;
  };
  const text = build(p);
  if (names.size < 1000) names.set(text, name); // statements are built at module load; a bound in case one ever is not
  return {
    name,
    text,
    with(values) {
      return {
        name,
        text,
        values: order.map((param) => {
          if (!(param in values)) throw new Error(`statement ${name}: missing parameter ${param}`);
          return values[param];
        }),
      };
    },
  };
}

/**
 * A CTE that makes the statement's own (implicit) transaction commit without waiting for its WAL
 * flush: `synchronous_commit = off` for that transaction only. The statement must select from it
 * (`(select async_commit from async_commit)`), or PostgreSQL never evaluates it. For statements
 * followed by a synchronous commit that writes WAL, which makes them durable too (WAL is flushed
 * in order) before anything depends on them outside the database: the chat turn's hold, made
 * durable by the turn's synchronous finish (docs/design/billing-reservations.md).
 * Never run it inside an explicit transaction: it would apply to the whole transaction.
 */
export const ASYNC_COMMIT_CTE = "async_commit as (select set_config('synchronous_commit', 'off', true) as async_commit)";
