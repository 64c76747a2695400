import type pg from "pg";
import { A2aTask, Agent } from "../db/schema.js";
import { sqlNames } from "../db/names.js";
import { statement, type Param } from "../db/statement.js";
import { finishTurnsStatement, finishTurnStatement, turnsArray, type TurnFinishWith } from "../threads/finish.js";
import { reclaimStatements } from "../threads/store.js";
import { openStatements, type TurnOpenWith } from "../chat/store.js";
import { chatTaskPushCte } from "../outbound/store.js";
import { INTERRUPTED_ERROR, type TaskRow, type TaskStateName } from "./store.js";

/**
 * A chat task's writes (table a2a_tasks): its record with the turn's open or finish or on its
 * own, its end, the mark of a followed task, the reclaim of dead turns' tasks, and CancelTask's
 * word to the instance that runs the turn. The reads are store.ts's.
 */

const T = sqlNames(A2aTask);
const A = sqlNames(Agent);

/**
 * The agent's row, locked against its delete until the statement commits, in the writes of a task
 * outside its turn's statements: the key check the column does not make (db/schema/a2a.ts), so no
 * task outlives its agent. A turn's open and finish need none (the turn's thread goes with the agent).
 */
const agentKept = (p: Param) => `exists (select 1 from ${A.table} where ${A.id} = ${p("agentId")}::varchar for key share)`;

/** Chat task states changes are NOTIFYed here (`{ taskId, accountId, state }`), so every instance's subscribers hear them. */
export const A2A_TASK_CHANNEL = "a2a_task";
/** CancelTask asks every instance to stop a chat turn here (the task id), so the one that runs it does. */
export const A2A_CANCEL_CHANNEL = "a2a_task_cancel";

const REQUEST_CANCEL = statement("a2a-request-cancel", (p) => `select pg_notify('${A2A_CANCEL_CHANNEL}', ${p("taskId")})`);

/** Tells every instance to stop the chat turn of `taskId` (chat-task.ts `listenForChatCancels`). */
export async function requestChatCancel(db: pg.Pool, taskId: string): Promise<void> {
  await db.query(REQUEST_CANCEL.with({ taskId }));
}

/**
 * A chat task's record is written when its id is about to leave, never before (a blocking send's
 * id leaves with its end, and until then nobody can ask for it), and never twice:
 * - by the turn's open, synchronously committed, when the id leaves right after the open (a
 *   non-blocking send, and any send with a push config, which refers to the record): `openTurnWithTask`;
 * - by the turn's finish, already ended, when the id leaves with the end (a blocking send, and a
 *   stream whose answer came before the id had to leave): `finishTurnWithTask` (not written before);
 * - on its own, synchronously committed, when a stream's id must leave before the end (text came,
 *   or the upstream is slow): `insertWorkingChatTask`; the finish then ends it (`finishTurnWithTask`).
 * So the common turn writes one row in a statement it makes anyway: no CTE in the open, no update
 * of the row, no index entry written twice. The context is the turn's thread (`threadId`).
 */
export interface ChatTaskRecord {
  id: string;
  accountId: string;
  agentId: string;
  /** The user message as the task keeps it (mapping.ts `storedRequest`). */
  request: Record<string, unknown>;
  startedAt: Date;
  /** The record as the statements' parameters (the message as JSON text), made once. */
  values: RecordValues;
}

type RecordValues = { taskId: string; accountId: string; agentId: string; taskRequest: string; taskStartedAt: string };

/** A chat task's record, its statements' parameters made once (the only way one is made, so the two agree). */
export function chatTaskRecord(id: string, accountId: string, agentId: string, request: Record<string, unknown>, startedAt: Date): ChatTaskRecord {
  // Times as ISO text: PostgreSQL reads them as it would a Date, which pg formats in local time, slower.
  const values = { taskId: id, accountId, agentId, taskRequest: JSON.stringify(request), taskStartedAt: startedAt.toISOString() };
  return { id, accountId, agentId, request, startedAt, values };
}

const TASK_COLUMNS = `${T.id}, ${T.account}, ${T.agent}, ${T.contextId}, ${T.kind}, ${T.state}, ${T.request}, ${T.answer}, ${T.error}, ${T.createdAt}, ${T.updatedAt}`;
/** A chat task's values in TASK_COLUMNS' order; its state, answer, error and last change are the caller's SQL. */
const taskValues = (p: Param, state: string, answer: string, error: string, updatedAt: string) =>
  `${p("taskId")}, ${p("accountId")}, ${p("agentId")}, ${p("threadId")}, 'chat', ${state}, ${p("taskRequest")}::jsonb, ${answer}, ${error}, ${p("taskStartedAt")}::timestamptz, ${updatedAt}`;

const OPEN_WITH_TASK = openStatements({
  name: "a2a-task",
  ctes: (p) => `task_insert as (insert into ${T.table} (${TASK_COLUMNS})
                select ${taskValues(p, "'working'", "null", "null", `${p("taskStartedAt")}::timestamptz`)} where exists (select 1 from hold))`,
  durable: true,
});

/** The open that writes the task (working) when it accepts the turn: a refused turn (402, 429, thread_busy) writes none. */
export function openTurnWithTask(r: ChatTaskRecord): TurnOpenWith {
  return { statements: OPEN_WITH_TASK, values: r.values };
}

const INSERT_WORKING_TASK = statement(
  "a2a-insert-working-task",
  (p) => `insert into ${T.table} (${TASK_COLUMNS}) select ${taskValues(p, "'working'", "null", "null", `${p("taskStartedAt")}::timestamptz`)} where ${agentKept(p)}`,
);

/**
 * A stream's task, written (working) while its turn's upstream call runs, because its id must
 * leave before the end. Synchronously committed, after the turn's asynchronously committed open:
 * its WAL flush makes the open's hold and thread durable too (WAL is flushed in order).
 */
export async function insertWorkingChatTask(db: pg.Pool, r: ChatTaskRecord, threadId: string): Promise<void> {
  await db.query(INSERT_WORKING_TASK.with({ ...r.values, threadId }));
}

/** A chat task's row as findTask reads it, from what its writer knows. */
export function chatTaskRow(id: string, contextId: string, request: Record<string, unknown>, end: ChatTaskEnd, at: Date): TaskRow {
  return { id, contextId, kind: "chat", state: end.state, request, answer: end.answer, error: end.error, result: null, payload: null, inputRequest: null, statusAt: at, cursorUs: at.getTime() * 1000 };
}

/**
 * CTEs of a written chat task's end (`write`: a statement returning the row's id, account, state
 * and followed), its push notifications recorded with it; the column NOTIFYs it (delivered on
 * commit) when someone follows the task (`followTask`). A NOTIFY holds PostgreSQL's notify queue
 * lock from before its commit's WAL flush to the end of the commit, so every notifying commit of
 * the cluster waits for the one before: a turn nobody follows sends none.
 */
const taskEndCtes = (write: string) => `task_end as (${write} returning ${T.id}, ${T.account}, ${T.state}, ${T.followed}),
     ${chatTaskPushCte("task_end")}`;
const TASK_END_NOTIFIED = `(select count(pg_notify('${A2A_TASK_CHANNEL}', json_build_object('taskId', ${T.id}, 'accountId', ${T.account}, 'state', ${T.state})::text)) from task_end where ${T.followed}) as task_end_notified`;
/** The end of a task written before (only from working: a second end changes nothing). */
const endUpdate = (p: Param, when: string) => `update ${T.table} set ${T.state} = ${p("taskState")}, ${T.answer} = ${p("taskAnswer")}, ${T.error} = ${p("taskError")}, ${T.updatedAt} = ${p("taskEndedAt")}
                where ${T.id} = ${p("taskId")} and ${T.state} = 'working' and ${when}`;

/**
 * Marks a chat task followed, after the follower LISTENs and before it reads the task: its end is
 * NOTIFYed from then on. The end's update and this one take the row's lock in turn and each sees
 * the other's committed row (READ COMMITTED re-reads the latest version), so either the end sees
 * the mark and NOTIFYs, or it committed first and the follower's read after this finds it ended.
 */
const FOLLOW_TASK = statement("a2a-follow-task", (p) => `update ${T.table} set ${T.followed} = true where ${T.id} = ${p("taskId")} and ${T.kind} = 'chat' and not ${T.followed}`);

export async function followTask(db: pg.Pool, id: string): Promise<void> {
  await db.query(FOLLOW_TASK.with({ taskId: id }));
}

/**
 * The reclaim of dead chat turns (threads/store.ts), extended to end their tasks failed in its own
 * statement, through the same CTEs as every end: the push notifications recorded, the NOTIFY sent
 * when someone follows the task. One turn at a time holds a thread's lease, so a task still working
 * on a dead turn's thread is that turn's (or an earlier one's whose end could not be stored: not
 * running either). Found through the agent's index: context_id has none (the insert stays cheap).
 * Installed on the runtime by the composition root, so every reclaim ends them.
 */
export const TURN_RECLAIM_WITH_TASKS = reclaimStatements({
  name: "a2a-tasks",
  ctes: () =>
    taskEndCtes(`update ${T.table} t set ${T.state} = 'failed', ${T.error} = '${INTERRUPTED_ERROR}', ${T.updatedAt} = now() from dead d
                where t.${T.agent} = d.agent_id and t.${T.contextId} = d.thread_id and t.${T.kind} = 'chat' and t.${T.state} = 'working'`),
  columns: TASK_END_NOTIFIED,
});

/**
 * A chat task's end on its own (a turn that failed, or whose finish did not write it): the
 * record whether or not it was written before (then only from working).
 */
const END_TASK_ALONE = statement(
  "a2a-end-chat-task",
  (p) => `with ${taskEndCtes(`insert into ${T.table} (${TASK_COLUMNS}) select ${taskValues(p, p("taskState"), p("taskAnswer"), p("taskError"), `${p("taskEndedAt")}::timestamptz`)} where ${agentKept(p)}
                on conflict (${T.id}) do update set ${T.state} = excluded.${T.state}, ${T.answer} = excluded.${T.answer}, ${T.error} = excluded.${T.error}, ${T.updatedAt} = excluded.${T.updatedAt}
                where ${T.table}.${T.state} = 'working'`)} select ${TASK_END_NOTIFIED}`,
);

/** The finish that also ends a task written before (one statement, one durable commit): written only when the finish settles the turn. */
const FINISH_TURN_AND_TASK = finishTurnStatement("thread-finish-turn-a2a-task", { ctes: (p) => taskEndCtes(endUpdate(p, "exists (select 1 from held)")), columns: TASK_END_NOTIFIED });

/**
 * The finish that writes a task nobody knows yet, already ended: no push config can refer to it
 * and nobody follows it, so nothing is notified.
 */
const FINISH_TURN_AND_NEW_TASK = finishTurnStatement("thread-finish-turn-a2a-new-task", {
  ctes: (p) => `task_written as (insert into ${T.table} (${TASK_COLUMNS})
                select ${taskValues(p, p("taskState"), p("taskAnswer"), p("taskError"), `${p("taskEndedAt")}::timestamptz`)} where exists (select 1 from held) returning ${T.id})`,
  columns: "exists (select 1 from task_written) as task_written",
});

/**
 * Both finishes above for a batch of one account's turns (threads/finish.ts, FinishBatcher): each
 * turn's task, if it has one, ended when written before, written ended when not, only for the turns
 * the batch settles; push notifications recorded and followed tasks NOTIFYed as above. The arrays
 * have one element per turn of the batch (null: a turn without a task, such as a chat completion's).
 */
const FINISH_TURNS_AND_TASKS = finishTurnsStatement("thread-finish-turns-a2a-tasks", {
  ctes: (p) => {
    const arr = (name: string, type: string) => turnsArray(p, name, type);
    return `task_input as (select x.* from unnest(${arr("taskIds", "text")}, ${arr("tasksWritten", "boolean")}, ${arr("taskStates", "text")}, ${arr("taskAnswers", "text")}, ${arr("taskErrors", "text")},
                                                   ${arr("taskEndedAts", "timestamptz")}, ${arr("taskRequests", "jsonb")}, ${arr("taskStartedAts", "timestamptz")})
                            with ordinality as x(task_id, written, end_state, end_answer, end_error, ended_at, request, started_at, n)
                      where x.task_id is not null and x.n in (select n from settled)),
          ${taskEndCtes(`update ${T.table} t set ${T.state} = x.end_state, ${T.answer} = x.end_answer, ${T.error} = x.end_error, ${T.updatedAt} = x.ended_at
                from task_input x where x.written and t.${T.id} = x.task_id and t.${T.state} = 'working'`)},
          task_written as (insert into ${T.table} (${TASK_COLUMNS})
                select x.task_id, ${p("accountId")}, i.agent_id, i.thread_id, 'chat', x.end_state, x.request, x.end_answer, x.end_error, x.started_at, x.ended_at
                  from task_input x join input i on i.n = x.n where not x.written)`;
  },
  columns: TASK_END_NOTIFIED,
});

export interface ChatTaskEnd {
  state: TaskStateName;
  answer: string | null;
  error: string | null;
}
const endValues = (id: string, end: ChatTaskEnd, at: Date) => ({ taskId: id, taskState: end.state, taskAnswer: end.answer, taskError: end.error, taskEndedAt: at.toISOString() });

/** A chat task's end on its own, on the turn's thread `threadId`. */
export async function endChatTask(db: pg.Pool, r: ChatTaskRecord, threadId: string, end: ChatTaskEnd): Promise<void> {
  await db.query(END_TASK_ALONE.with({ ...r.values, ...endValues(r.id, end, new Date()), threadId }));
}

/** An answered turn's finish that also ends its task, written before (`written`) or now; the end's time `at`. */
export function finishTurnWithTask(r: ChatTaskRecord, written: boolean, end: ChatTaskEnd, at: Date): TurnFinishWith {
  const ended = endValues(r.id, end, at);
  const fresh = written ? undefined : r.values;
  const values = fresh ? { ...fresh, ...ended } : ended;
  // The same values as the batch's elements (FINISH_TURNS_AND_TASKS), used when the turn joins one.
  const batch = {
    statement: FINISH_TURNS_AND_TASKS,
    values: {
      taskIds: r.id,
      tasksWritten: written,
      taskStates: end.state,
      taskAnswers: end.answer,
      taskErrors: end.error,
      taskEndedAts: ended.taskEndedAt,
      taskRequests: fresh?.taskRequest ?? null,
      taskStartedAts: fresh?.taskStartedAt ?? null,
    },
  };
  return { statement: written ? FINISH_TURN_AND_TASK : FINISH_TURN_AND_NEW_TASK, values, batch };
}
