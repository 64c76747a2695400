import type pg from "pg";
import type { Client } from "@temporalio/client";

/** Read-only looks into the stack's database and Temporal's visibility, for the chaos suite's verdict. */
export async function unfinishedJobs(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ n: number }>("select count(*)::int as n from jobs where status in ('queued', 'running')");
  return rows[0]!.n;
}

export async function jobsOf(db: pg.Pool, triggerId: string) {
  const { rows } = await db.query<{ id: string; status: string; result: unknown; error: string | null }>(
    "select id, status, result, error from jobs where trigger_id = $1",
    [triggerId],
  );
  return rows;
}

/** Every account's balance beside the sum of its ledger. */
export async function accountLedgers(db: pg.Pool) {
  const { rows } = await db.query<{ id: string; balance: string; sum: string }>(
    `select a.id, a.balance_micros::text as balance, coalesce(sum(l.amount_micros), 0)::text as sum
       from accounts a left join ledger_entries l on l.account_id = a.id group by a.id, a.balance_micros`,
  );
  return rows;
}

/** Workflow id → number of agentRun executions Temporal's visibility lists for it. */
export async function workflowExecutions(client: Client): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const wf of client.workflow.list({ query: "WorkflowType = 'agentRun'" })) counts.set(wf.workflowId, (counts.get(wf.workflowId) ?? 0) + 1);
  return counts;
}

/** The account's A2A push deliveries by the state they report and how they ended (delivered, failed, pending). */
export async function pushDeliveries(db: pg.Pool, accountId: string) {
  const { rows } = await db.query<{ event: string; status: string; n: number }>(
    "select event, status, count(*)::int as n from deliveries where account_id = $1 and kind = 'a2a_push' group by event, status order by event, status",
    [accountId],
  );
  return rows;
}
