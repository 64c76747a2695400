import type pg from "pg";
import type { Client } from "@temporalio/client";
import type { AskedRunRow } from "./asks.js";

/** Read-only looks into the stack's database and Temporal's visibility, for the chaos suite's verdict. */

/** Jobs not ended: queued, running, or waiting for an answer (input_required). */
export async function unfinishedJobs(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ n: number }>("select count(*)::int as n from jobs where status not in ('done', 'failed')");
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

/**
 * Each asking run as stored: its status and result, its questions and which channel's answer was
 * recorded, how often its model step was started, and its ledger entries by kind (one chat turn:
 * a hold and the release that settles it, carrying the call's tokens; a `charge` only when the call
 * cost more than its hold).
 */
export async function askedRuns(db: pg.Pool, jobIds: string[]) {
  const { rows } = await db.query<AskedRunRow>(
    `select j.id, j.status, j.result,
            (select count(*)::int from input_requests r where r.job_id = j.id) as requests,
            (select string_agg(r.answered_via, ',') from input_requests r where r.job_id = j.id and r.status = 'answered') as "answeredVia",
            (select coalesce(sum(s.executions), 0)::int from job_steps s where s.job_id = j.id and s.kind = 'chat') as "chatExecutions",
            (select count(*)::int from ledger_entries l where l.job_id = j.id and l.kind = 'hold') as holds,
            (select count(*)::int from ledger_entries l where l.job_id = j.id and l.kind = 'hold_release') as releases
       from jobs j where j.id = any($1::text[])`,
    [jobIds],
  );
  return rows;
}

