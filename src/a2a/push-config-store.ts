import type pg from "pg";
import { A2aPushConfig, A2aTask, Job } from "../db/schema.js";
import { sqlNames } from "../db/names.js";
import { newId } from "../infra/ids.js";
import { statement } from "../db/statement.js";
import { jobPushState, newPushConfigCte, PUSH_CONFIG_IDS } from "../outbound/store.js";

/**
 * The push notification configs of A2A tasks (table a2a_push_configs): kept, listed, found and
 * deleted for the task's caller; the outbound engine reads them when a task's state changes.
 */

const T = sqlNames(A2aTask);
const J = sqlNames(Job);
const P = sqlNames(A2aPushConfig);

export interface PushConfigRow {
  /** The id the client sees: its own choice, or the config's id. */
  id: string;
  /** The config's own id (the keyset of the list's page token, with cursorUs). */
  rowId: string;
  taskId: string;
  url: string;
  token: string | null;
  authentication: { scheme?: string; credentials?: string } | null;
  /** The keyset of the list's page token (created_at in µs). */
  cursorUs: number;
}

const PUSH_CURSOR = `(extract(epoch from ${P.createdAt}) * 1000000)::bigint`;
/** A config as the client names it: the id it chose, or the config's own. */
const PUSH_ID = `coalesce(${P.clientId}, ${P.id})`;
const PUSH_COLUMNS = `${PUSH_ID} as id, ${P.id} as "rowId", ${P.task} as "taskId", ${P.url} as url, ${P.token} as token, ${P.authentication} as authentication, ${PUSH_CURSOR} as "cursorUs"`;

/**
 * A push config of a task and the event of the state the task is in, in one statement under the
 * task's state row lock (a job task's job row, a chat task's own row), which every state change
 * also holds while it records the events of its configs (outbound/store.ts `PUSH_CONFIG_IDS`): a
 * change that commits first is read here, a later one reads this config. The task's row is
 * locked against other inserts too, so the configs counted (with a snapshot after the lock) are
 * exact and the cap holds under concurrent creates.
 */
const INSERT_PUSH_CONFIG = statement(
  "a2a-insert-push-config",
  // The job's row is locked before the task's, in the order a job's transition takes them (the
  // jobs row, then its task's row in outbound/store.ts jobTaskCte): the other order deadlocks with
  // a transition. The task's scan evaluates `job` (an InitPlan) before it locks its own row.
  (p) => `with job as (select j.${J.id} as id, j.${J.status} as status, j.${J.error} as error from ${J.table} j
                        where j.${J.id} = ${p("taskId")} and j.${J.account} = ${p("accountId")} for share),
     task as (select t.${T.id} as id, t.${T.account} as account_id, t.${T.kind} as kind, t.${T.state} as state from ${T.table} t
                        where t.${T.id} = ${p("taskId")} and t.${T.account} = ${p("accountId")} and (select count(*) from job) >= 0 for no key update),
     existing as (select count(c)::int as n from task cross join lateral ${PUSH_CONFIG_IDS}(task.id) c),
     config as (insert into ${P.table} (${P.id}, ${P.task}, ${P.clientId}, ${P.url}, ${P.token}, ${P.authentication}, ${P.createdAt})
                select ${p("configId")}, task.id, ${p("clientId")}::varchar, ${p("url")}, ${p("token")}, ${p("authentication")}::jsonb, now() from task, existing
                 where existing.n < ${p("cap")} and not exists (select 1 from ${P.table} c where c.${P.task} = task.id and c.${P.clientId} = ${p("clientId")}::varchar)
                returning ${P.id} as id),
     config_state as (select config.id as config_id, task.account_id, job.id as job_id,
                             case when task.kind = 'job' then ${jobPushState("job")} when task.state <> 'submitted' then task.state end as state
                        from config cross join task left join job on task.kind = 'job'),
     ${newPushConfigCte("config_state")}
  select (select n from existing) as existing, exists (select 1 from config) as created,
         exists (select 1 from ${P.table} c, task where c.${P.task} = task.id and c.${P.clientId} = ${p("clientId")}::varchar) as taken`,
);

export type PushConfigInsert = { created: true; id: string } | { created: false; existing: number | null; taken: boolean };

/**
 * Keeps a push notification config of a task (given with a message, or created for it) for the
 * outbound delivery engine (docs/guides/webhooks.md), unless the task has `cap` already (or is gone: existing null).
 */
export async function insertPushConfig(
  db: pg.Pool,
  accountId: string,
  taskId: string,
  c: { clientId: string | null; url: string; token: string | null; authentication: Record<string, unknown> | null },
  cap: number,
): Promise<PushConfigInsert> {
  const id = newId("pnc");
  let rows: { existing: number | null; created: boolean; taken: boolean }[];
  try {
    ({ rows } = await db.query<{ existing: number | null; created: boolean; taken: boolean }>(
      INSERT_PUSH_CONFIG.with({ taskId, accountId, configId: id, clientId: c.clientId, url: c.url, token: c.token, authentication: c.authentication === null ? null : JSON.stringify(c.authentication), cap }),
    ));
  } catch (err) {
    // A concurrent create of the same client id committed after this statement's snapshot.
    if ((err as { code?: string }).code === "23505" && c.clientId !== null) return { created: false, existing: 0, taken: true };
    throw err;
  }
  const r = rows[0]!;
  return r.created ? { created: true, id: c.clientId ?? id } : { created: false, existing: r.existing, taken: r.taken };
}

/** A page of a task's push configs, oldest first, after the keyset `after` (the caller has checked the task is the caller's). */
export async function listPushConfigs(db: pg.Pool, taskId: string, limit: number, after?: readonly [number, string]): Promise<PushConfigRow[]> {
  const keyset = after ? `and (${P.createdAt}, ${P.id}) > (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::text)` : "";
  const { rows } = await db.query<PushConfigRow>(
    `select ${PUSH_COLUMNS} from ${P.table} where ${P.task} = $1 ${keyset} order by ${P.createdAt}, ${P.id} limit $2`,
    after ? [taskId, limit, after[0], after[1]] : [taskId, limit],
  );
  return rows;
}

export async function findPushConfig(db: pg.Pool, taskId: string, id: string): Promise<PushConfigRow | undefined> {
  const { rows } = await db.query<PushConfigRow>(`select ${PUSH_COLUMNS} from ${P.table} where ${P.task} = $1 and ${PUSH_ID} = $2`, [taskId, id]);
  return rows[0];
}

/** Idempotent; events not yet delivered to it find no config and stop. */
export async function deletePushConfig(db: pg.Pool, taskId: string, id: string): Promise<void> {
  await db.query(`delete from ${P.table} where ${P.task} = $1 and ${PUSH_ID} = $2`, [taskId, id]);
}
