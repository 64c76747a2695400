import type pg from "pg";
import { A2aTask, AuditEntry, InputRequest, Job, Thread } from "../db/schema.js";
import { sqlNames } from "../db/names.js";
import { clientContextOf, threadOfClientContext } from "./contexts.js";

/**
 * The A2A task records (table a2a_tasks). A chat task's state is its own; a job task's state is
 * read from its job (same id) in the same statement, so it can never disagree with the job (the
 * copy on the row, kept by the job's transitions, serves only ListTasks' filter and order).
 * Their push notification configs are in push-config-store.ts; a chat task's writes in
 * chat-task-store.ts.
 */

const T = sqlNames(A2aTask);
const J = sqlNames(Job);
const H = sqlNames(Thread);
const E = sqlNames(AuditEntry);
const Q = sqlNames(InputRequest);

export type TaskStateName = "submitted" | "working" | "input-required" | "completed" | "failed" | "canceled";
export const TERMINAL_STATES: readonly TaskStateName[] = ["completed", "failed", "canceled"];
/** A job that waits for a person's answer (`ctx.ask`): interrupted, not ended; a message on the task answers it. */
export const INPUT_REQUIRED: TaskStateName = "input-required";

export interface TaskRow {
  id: string;
  contextId: string;
  kind: "chat" | "job";
  state: TaskStateName;
  request: Record<string, unknown> | null;
  answer: string | null;
  error: string | null;
  result: unknown;
  payload: unknown;
  /** The question a job task waits on (state input-required), else null. */
  inputRequest: { prompt: string; schema: unknown } | null;
  statusAt: Date;
  cursorUs: number;
}

export const INTERRUPTED_ERROR = "The turn was interrupted";

/**
 * An interrupted chat turn (its instance died: the thread lease ran out) reads as failed until
 * the reclaim ends its task (TURN_RECLAIM_WITH_TASKS), and for ever when nothing could store its end.
 */
const INTERRUPTED = `t.${T.state} = 'working' and t.${T.updatedAt} < now() - interval '1 minute'
  and not exists (select 1 from ${H.table} h where h.${H.id} = t.${T.contextId} and h.${H.busyUntil} > now())`;

const STATE = `case
  when t.${T.kind} = 'chat' then case when ${INTERRUPTED} then 'failed' else t.${T.state} end
  when j.${J.status} = 'queued' then 'submitted'
  when j.${J.status} = 'running' then 'working'
  when j.${J.status} = 'input_required' then 'input-required'
  when j.${J.status} = 'done' then 'completed'
  when j.${J.error} = 'cancelled' then 'canceled'
  else 'failed' end`;

const STATUS_AT = `coalesce(j.${J.finishedAt}, j.${J.startedAt}, j.${J.createdAt}, t.${T.updatedAt})`;

const COLUMNS = `t.${T.id} as id, case when t.${T.kind} = 'chat' then ${clientContextOf(`t.${T.contextId}`)} else t.${T.contextId} end as "contextId", t.${T.kind} as kind, ${STATE} as state, t.${T.request} as request,
  t.${T.answer} as answer, case when t.${T.kind} = 'chat' and ${INTERRUPTED} then '${INTERRUPTED_ERROR}' else coalesce(t.${T.error}, j.${J.error}) end as error,
  j.${J.result} as result, (select e.${E.payload} from ${E.table} e where e.${E.job} = j.${J.id} order by e.${E.createdAt} limit 1) as payload,
  case when j.${J.status} = 'input_required' then (select json_build_object('prompt', q.${Q.prompt}, 'schema', q.${Q.schema}) from ${Q.table} q
    where q.${Q.job} = j.${J.id} and q.${Q.status} = 'pending' order by q.${Q.createdAt} desc limit 1) end as "inputRequest",
  ${STATUS_AT} as "statusAt", (extract(epoch from ${STATUS_AT}) * 1000000)::bigint as "cursorUs"`;

const FROM = `${T.table} t left join ${J.table} j on j.${J.id} = t.${T.id}`;

/** A job's state as an A2A state name (`j` the job's row). */
const JOB_STATE = `case when j.${J.status} = 'queued' then 'submitted' when j.${J.status} = 'running' then 'working' when j.${J.status} = 'input_required' then 'input-required' when j.${J.status} = 'done' then 'completed'
  when j.${J.error} = 'cancelled' then 'canceled' else 'failed' end`;

/**
 * The record of a job task (id = the job's), with the job's state and status time as this
 * statement sees them; a repeated message id finds the record already there. A transition of the
 * job that came first left a stub (outbound/store.ts `jobTaskCte`), completed here: its state and
 * time, the later ones, stay. A transition meanwhile updates this row (its ON CONFLICT waits for it).
 * The job's row is locked against its delete (its agent's takes it) until this commits: the agent's
 * delete trigger then finds the task (the agent is a column, not a key: db/schema/a2a.ts).
 */
export async function insertJobTask(db: pg.Pool, t: { jobId: string; accountId: string; agentId: string; contextId: string; request: Record<string, unknown> }): Promise<void> {
  await db.query(
    `insert into ${T.table} as t (${T.id}, ${T.account}, ${T.agent}, ${T.contextId}, ${T.kind}, ${T.state}, ${T.request}, ${T.createdAt}, ${T.updatedAt})
     select $1::text, $2::text, $3::text, $4::text, 'job', ${JOB_STATE}, $5::jsonb, now(), coalesce(j.${J.finishedAt}, j.${J.startedAt}, j.${J.createdAt})
       from ${J.table} j where j.${J.id} = $1::text for key share
     on conflict (${T.id}) do update set ${T.contextId} = excluded.${T.contextId}, ${T.request} = excluded.${T.request} where t.${T.contextId} = ''`,
    [t.jobId, t.accountId, t.agentId, t.contextId, JSON.stringify(t.request)],
  );
}

/** A row whose record was written: not a job transition's stub (insertJobTask). */
const WRITTEN = `t.${T.contextId} <> ''`;

/** A task of this agent of this account, else undefined (another agent's task looks missing). */
export async function findTask(db: pg.Pool, accountId: string, agentId: string, id: string): Promise<TaskRow | undefined> {
  const { rows } = await db.query<TaskRow>(`select ${COLUMNS} from ${FROM} where t.${T.id} = $1 and t.${T.account} = $2 and t.${T.agent} = $3 and ${WRITTEN}`, [id, accountId, agentId]);
  return rows[0];
}

export interface TaskListFilter {
  contextId?: string;
  state?: TaskStateName;
  statusAfter?: Date;
  /** Keyset: the last row of the previous page. */
  before?: readonly [number, string];
}

/** ListTasks' totalSize counts at most this many tasks (a bounded walk of the index). */
export const TOTAL_SIZE_CAP = 1000;

/**
 * A page of the agent's tasks, newest status first, and how many match (at most TOTAL_SIZE_CAP).
 * The page is a walk of a2a_tasks_agent_updated_idx in keyset order on the task rows alone (the
 * status time and state are kept on the row: a job task's by its job's transitions); only the
 * page's rows are then read whole (with their jobs, by id).
 */
export async function listTasks(db: pg.Pool, accountId: string, agentId: string, filter: TaskListFilter, limit: number): Promise<{ rows: TaskRow[]; total: number }> {
  const where = [`t.${T.agent} = $1`, `t.${T.account} = $2`, WRITTEN];
  const params: unknown[] = [agentId, accountId];
  const add = (sql: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(sql(params.length));
  };
  // A chat task's context is its thread, named by its id or by the client's own contextId.
  if (filter.contextId) add((n) => `(t.${T.contextId} = $${n} or t.${T.contextId} = ${threadOfClientContext("$1", `$${n}`)})`, filter.contextId);
  if (filter.state) add((n) => `t.${T.state} = $${n}`, filter.state);
  if (filter.statusAfter) add((n) => `t.${T.updatedAt} > $${n}`, filter.statusAfter);
  const counted = params.length;
  const conditions = where.join(" and ");
  if (filter.before) {
    params.push(filter.before[0], filter.before[1]);
    where.push(`(t.${T.updatedAt}, t.${T.id}) < (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::text)`);
  }
  params.push(limit);
  const [page, count] = await Promise.all([
    db.query<{ id: string; cursorUs: string }>(
      `select t.${T.id} as id, (extract(epoch from t.${T.updatedAt}) * 1000000)::bigint as "cursorUs" from ${T.table} t
        where ${where.join(" and ")} order by t.${T.updatedAt} desc, t.${T.id} desc limit $${params.length}`,
      params,
    ),
    db.query<{ n: number }>(`select count(*)::int as n from (select 1 from ${T.table} t where ${conditions} limit ${TOTAL_SIZE_CAP}) c`, params.slice(0, counted)),
  ]);
  const ids = page.rows.map((r) => r.id);
  const whole = ids.length === 0 ? [] : (await db.query<TaskRow>(`select ${COLUMNS} from ${FROM} where t.${T.id} = any($1::text[])`, [ids])).rows;
  const byId = new Map(whole.map((r) => [r.id, r]));
  // The cursor is the row's status time as the page was walked (the index's order).
  const rows = page.rows.flatMap((p) => {
    const r = byId.get(p.id);
    return r ? [{ ...r, cursorUs: Number(p.cursorUs) }] : [];
  });
  return { rows, total: count.rows[0]?.n ?? 0 };
}

/** A task by id alone (the delivery engine's view: it has no caller). */
export async function findTaskById(db: pg.Pool, id: string): Promise<TaskRow | undefined> {
  const { rows } = await db.query<TaskRow>(`select ${COLUMNS} from ${FROM} where t.${T.id} = $1`, [id]);
  return rows[0];
}
