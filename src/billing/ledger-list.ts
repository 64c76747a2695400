import type pg from "pg";
import { decodeCursor, toConnection, type Connection } from "../graphql/connection.js";

export interface LedgerRow {
  id: number;
  amountMicros: number;
  kind: string;
  reference: string | null;
  agentId: string | null;
  apiKeyId: string | null;
  threadId: string | null;
  triggerId: string | null;
  jobId: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  createdAt: Date;
}

/** The account's ledger, newest first; the id is a sequence, so it is the cursor and the order. */
export async function pageLedger(db: pg.Pool, accountId: string, first: number, after: string | null | undefined): Promise<Connection<LedgerRow>> {
  const cursor = decodeCursor(after, ["number"] as const);
  const { rows } = await db.query<LedgerRow>(
    `select id, amount_micros as "amountMicros", kind, reference, agent_id as "agentId", api_key_id as "apiKeyId", thread_id as "threadId",
            trigger_id as "triggerId", job_id as "jobId", model, input_tokens as "inputTokens", output_tokens as "outputTokens", created_at as "createdAt"
     from ledger_entries where account_id = $1 and ($2::bigint is null or id < $2) order by id desc limit $3`,
    [accountId, cursor?.[0] ?? null, first + 1],
  );
  return toConnection(rows, first, (r) => [r.id], (r) => r);
}
