import type pg from "pg";

/**
 * bench:scale's data: rows the API made, then copied in bulk to a size. Each copy is one of the
 * API's rows with a new id and a creation time spread over the last `days` (`INSERT … SELECT`
 * through `jsonb_populate_record`, so every column is the API's own), inserted through the same
 * tables, constraints and triggers as the API's writes (the ledger's copies go through the
 * usage_rollups trigger). Copies say `copy` in their ids; what the API made does not.
 */

/** The tables bench:scale grows, with how to count their rows. */
export const SCALE_TABLES = ["threads", "messages", "jobs", "audit_entries", "ledger_entries", "a2a_tasks", "usage_rollups"] as const;

const CHUNK = 100_000;
/** Creation times: the copy `i` of a step falls somewhere in the last `days` days (a fixed spread, not random: reruns match). */
const spread = (days: number) => `now() - make_interval(secs => ((g.i::bigint * 7919) % ${days * 86_400})::int)`;

async function chunks(n: number, f: (from: number, to: number) => Promise<unknown>): Promise<void> {
  for (let from = 1; from <= n; from += CHUNK) await f(from, Math.min(n, from + CHUNK - 1));
}

export async function countRows(pool: pg.Pool): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of SCALE_TABLES) out[t] = (await pool.query<{ n: number }>(`select count(*)::int as n from ${t}`)).rows[0]!.n;
  return out;
}

/**
 * Threads of `agentId` copied from its API-made threads, each with its source thread's messages,
 * until the agent has `target` threads.
 */
async function growThreads(pool: pg.Pool, agentId: string, target: number, tag: string): Promise<void> {
  const have = (await pool.query<{ n: number }>("select count(*)::int as n from threads where agent_id = $1", [agentId])).rows[0]!.n;
  await chunks(target - have, (lo, hi) =>
    pool.query(
      `with src as (select id, (row_number() over (order by id) - 1)::int as k from threads where agent_id = $1 and id not like '%copy%'),
            c as (select g.i, 'thr_copy${tag}_' || g.i as nid, s.id as sid, ${spread(30)} as at
                    from generate_series($2::int, $3::int) g(i) join src s on s.k = g.i % (select count(*) from src)),
            t as (insert into threads select r.* from c join threads o on o.id = c.sid cross join lateral jsonb_populate_record(null::threads, to_jsonb(o) || jsonb_build_object('id', c.nid, 'created_at', c.at, 'updated_at', c.at, 'busy_until', null, 'turn_id', null)) r)
       insert into messages select r.* from c join messages m on m.thread_id = c.sid cross join lateral jsonb_populate_record(null::messages, to_jsonb(m) || jsonb_build_object('id', nextval('messages_id_seq'), 'thread_id', c.nid, 'created_at', c.at)) r`,
      [agentId, lo, hi],
    ),
  );
}

/**
 * Jobs of `accountId` copied from its API-made finished jobs (with their audit entries, and their
 * A2A tasks when they have one), until the account has `target` jobs. Spread over 33 days: about a
 * tenth is past a 30-day retention window, for the retention run to purge.
 */
async function growJobs(pool: pg.Pool, accountId: string, target: number, tag: string): Promise<void> {
  const have = (await pool.query<{ n: number }>("select count(*)::int as n from jobs where account_id = $1", [accountId])).rows[0]!.n;
  await chunks(target - have, (lo, hi) =>
    pool.query(
      `with src as (select id, (row_number() over (order by id) - 1)::int as k from jobs where account_id = $1 and id not like '%copy%' and status in ('done', 'failed')),
            c as (select g.i, 'job_copy${tag}_' || g.i as nid, s.id as sid, ${spread(33)} as at
                    from generate_series($2::int, $3::int) g(i) join src s on s.k = g.i % (select count(*) from src)),
            j as (insert into jobs select r.* from c join jobs o on o.id = c.sid cross join lateral jsonb_populate_record(null::jobs, to_jsonb(o) || jsonb_build_object('id', c.nid, 'thread_id', null, 'created_at', c.at, 'started_at', c.at, 'finished_at', c.at, 'replay_of', null)) r),
            a as (insert into audit_entries select r.* from c join audit_entries e on e.job_id = c.sid cross join lateral jsonb_populate_record(null::audit_entries, to_jsonb(e) || jsonb_build_object('id', 'aud_copy${tag}_' || c.i, 'job_id', c.nid, 'created_at', c.at)) r)
       insert into a2a_tasks select r.* from c join a2a_tasks t on t.id = c.sid cross join lateral jsonb_populate_record(null::a2a_tasks, to_jsonb(t) || jsonb_build_object('id', c.nid, 'created_at', c.at, 'updated_at', c.at)) r`,
      [accountId, lo, hi],
    ),
  );
}

/** The account's model-call ledger rows copied (through the usage_rollups trigger) until it has `target`. */
async function growLedger(pool: pg.Pool, accountId: string, target: number, tag: string): Promise<void> {
  void tag;
  const have = (await pool.query<{ n: number }>("select count(*)::int as n from ledger_entries where account_id = $1", [accountId])).rows[0]!.n;
  await chunks(target - have, (lo, hi) =>
    pool.query(
      `with src as (select id, (row_number() over (order by id) - 1)::int as k from ledger_entries where account_id = $1 and reference not like '%copy%' and kind in ('hold', 'hold_release'))
       insert into ledger_entries select r.* from generate_series($2::int, $3::int) g(i) join src s on s.k = g.i % (select count(*) from src) join ledger_entries o on o.id = s.id cross join lateral jsonb_populate_record(null::ledger_entries, to_jsonb(o) || jsonb_build_object('id', nextval('ledger_entries_id_seq'), 'reference', 'copy' || g.i, 'created_at', ${spread(30)})) r`,
      [accountId, lo, hi],
    ),
  );
}

/** Chat A2A tasks of `agentId` copied from its API-made ones until it has `target`. */
async function growChatTasks(pool: pg.Pool, agentId: string, target: number, tag: string): Promise<void> {
  const have = (await pool.query<{ n: number }>("select count(*)::int as n from a2a_tasks where agent_id = $1", [agentId])).rows[0]!.n;
  await chunks(target - have, (lo, hi) =>
    pool.query(
      `with src as (select id, (row_number() over (order by id) - 1)::int as k from a2a_tasks where agent_id = $1 and id not like '%copy%')
       insert into a2a_tasks select r.* from generate_series($2::int, $3::int) g(i) join src s on s.k = g.i % (select count(*) from src) join a2a_tasks o on o.id = s.id cross join lateral jsonb_populate_record(null::a2a_tasks, to_jsonb(o) || jsonb_build_object('id', 'tsk_copy${tag}_' || g.i, 'created_at', ${spread(30)}, 'updated_at', ${spread(30)})) r`,
      [agentId, lo, hi],
    ),
  );
}

export interface ScaleTenants {
  chat: { accountId: string; agentId: string };
  runs: { accountId: string; agentId: string };
}

/** Grows every table to about `size` rows (messages: the copied threads' messages, a few per thread). */
export async function growTo(pool: pg.Pool, t: ScaleTenants, size: number): Promise<void> {
  const tag = String(size);
  await growThreads(pool, t.chat.agentId, size, tag);
  await growJobs(pool, t.runs.accountId, size, tag);
  await growLedger(pool, t.chat.accountId, size, tag);
  await growChatTasks(pool, t.chat.agentId, size, tag);
  for (const table of SCALE_TABLES) await pool.query(`vacuum analyze ${table}`);
  // The load leaves gigabytes of dirty pages: written out now, not by a checkpoint that would
  // overlap the timings (every commit's fsync then waits behind it) — a long-lived database's
  // steady state, which a sudden bulk load is not.
  await pool.query("checkpoint");
}
