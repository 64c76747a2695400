import type pg from "pg";
import type { Config } from "../../src/config/config.js";
import { costMicros, priceFor } from "../../src/billing/prices.js";
import { parseUsd } from "../../src/infra/money.js";
import { gql } from "./graphql.js";

/**
 * The money oracle of the chat tests (issue 17): an account's balance, read the way its owner
 * reads it (GraphQL `me { balance }`), must equal what it started with minus the charges of the
 * turns that were answered, each computed from the usage that answer reported and the model's
 * price: never a sum over the ledger, which would agree with a leak.
 */
export async function balanceMicros(url: string, adminToken: string): Promise<number> {
  const r = await gql<{ me: { balance: string } }>(url, adminToken, "{ me { balance } }");
  if (!r.data) throw new Error(`me { balance } failed: ${JSON.stringify(r.errors)}`);
  return Number(parseUsd(r.data.me.balance));
}

/** What an answered turn costs: its reported usage at the model's price. */
export function chargeOf(config: Config, model: string, usage: { prompt_tokens?: number; completion_tokens?: number; input_tokens?: number; output_tokens?: number }): number {
  return costMicros(priceFor(config, model), usage.prompt_tokens ?? usage.input_tokens ?? 0, usage.completion_tokens ?? usage.output_tokens ?? 0);
}

/** Holds of the account that nothing released or charged yet (a hold debited for ever when the turn is over). */
export async function unreleasedHolds(pool: pg.Pool, accountId: string): Promise<string[]> {
  const { rows } = await pool.query<{ reference: string }>(
    `select h.reference from ledger_entries h
      where h.account_id = $1 and h.kind = 'hold'
        and not exists (select 1 from ledger_entries r where r.account_id = h.account_id and r.reference = h.reference and r.kind in ('hold_release', 'charge'))`,
    [accountId],
  );
  return rows.map((r) => r.reference);
}

/** The balance from the account's row: for when the API that would answer `me` has stopped. */
export async function storedBalanceMicros(pool: pg.Pool, accountId: string): Promise<number> {
  const { rows } = await pool.query<{ b: string }>("select balance_micros as b from accounts where id = $1", [accountId]);
  return Number(rows[0]!.b);
}
