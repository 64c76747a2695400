import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import type { ChatMessage } from "../providers/types.js";
import { heldCte, reclaimCte, releaseBatchCte, releaseCte, type CallTags } from "../billing/ledger.js";
import { sqlNames } from "../db/names.js";
import { LedgerEntry, Message, Thread } from "../db/schema.js";
import { statement, type Param, type Statement } from "../db/statement.js";
import { FinishBatcher } from "./finish-batcher.js";
import { messageData } from "./store.js";

/**
 * The end of a chat turn, after its upstream call: the turn's messages, the release of its unspent
 * hold and its lease, in one synchronously committed statement (src/threads/store.ts has the
 * lease and the reclaim). Concurrent finishes of one account go together (FinishBatcher).
 */

const T = sqlNames(Thread);
const M = sqlNames(Message);
const L = sqlNames(LedgerEntry);

/** An array parameter of a batch, one element per turn (FINISH; a FinishExtension's own arrays too). */
export const turnsArray = (p: Param, name: string, type: string) =>
  // Arrays as scalar subqueries: the planner cannot count their elements, so the plan for one
  // turn and for sixty is the same generic plan, prepared once (a bare array parameter makes
  // PostgreSQL re-plan this statement on every call).
  `(select ${p(name)}::${type}[])`;

// Per turn of the batch (all of one account): its hold (the ledger row its open statement wrote,
// which a database crash may have lost: it commits asynchronously), and its thread row, updated
// only while this turn still holds the lease (`turn_id`). The update locks and re-reads the row:
// a reclaim that settled the turn since the statement's snapshot has cleared turn_id, so the turn
// is not in `t` and nothing is credited twice; and while turn_id is this turn's, nothing has
// settled its hold (the reclaim and the finish both clear it in the statement that settles), so
// no `hold_release` lookup is needed. Only turns in both settle (`settled`); the others are
// answered alone (finishTurn). Thread rows are locked before the account row, as by the reclaim.
/** The finish statement of a batch of turns (FINISH), optionally extended (FinishExtension). */
export function finishTurnsStatement(name: string, extension?: FinishExtension): Statement {
  return statement(name, (p) => {
    // Per-turn lookups are LATERAL on the call's own key (thread, reference), so the only index
    // that fits is ledger_entries_thread_reference_idx: with the account in the condition the
    // generic plan chose the account's index, i.e. a scan of all of the account's ledger rows per turn.
    const arr = (param: string, type: string) => turnsArray(p, param, type);
    return `with input as (select * from unnest(${arr("threadIds", "text")}, ${arr("references", "text")}, ${arr("releases", "bigint")}, ${arr("counts", "int")}, ${arr("agentIds", "text")}, ${arr("keyIds", "text")},
                                             ${arr("triggerIds", "text")}, ${arr("jobIds", "text")}, ${arr("models", "text")}, ${arr("inputTokens", "int")}, ${arr("outputTokens", "int")})
                     with ordinality as i(thread_id, reference, release, count, agent_id, key_id, trigger_id, job_id, model, input_tokens, output_tokens, n)),
          holds as (select i.n, h.held_at from input i cross join lateral (select ${L.createdAt} as held_at, ${L.account} as account from ${L.table}
                      where ${L.threadId} = i.thread_id and ${L.reference} = i.reference and ${L.kind} = 'hold' limit 1) h
                     where h.account = ${p("accountId")}),
          t as (update ${T.table} th set ${T.busyUntil} = null, ${T.turnId} = null, ${T.updatedAt} = now(),
                       ${T.messageCount} = th.${T.messageCount} + case when exists (select 1 from holds where holds.n = i.n) then i.count else 0 end
                  from input i where th.${T.id} = i.thread_id and th.${T.turnId} = i.reference returning i.n),
          settled as (select i.*, h.held_at from input i join holds h on h.n = i.n where i.n in (select n from t)),
          ${releaseBatchCte(p, "settled")},
          m as (insert into ${M.table} (${M.thread}, ${M.seq}, ${M.role}, ${M.content}, ${M.data}, ${M.createdAt})
                select x.thread_id, x.seq, x.role, x.content, x.data::jsonb, now()
                  from unnest(${arr("messageTurns", "int")}, ${arr("messageThreads", "text")}, ${arr("messageSeqs", "int")}, ${arr("roles", "text")}, ${arr("contents", "text")}, ${arr("data", "text")})
                       as x(n, thread_id, seq, role, content, data)
                 where x.n in (select n from settled))${extension ? `,
          ${extension.ctes(p)}` : ""}
     select exists (select 1 from settled s where s.n = i.n) as settled, exists (select 1 from t where t.n = i.n) as leased${extension ? `, ${extension.columns}` : ""} from input i order by i.n`;
  });
}
const FINISH = finishTurnsStatement("thread-finish-turns");

/**
 * What a caller above this folder writes in the finish's own statement (A2A: the task's end), so
 * it commits, durably, exactly when the turn does. `columns` are added to the final select (a CTE
 * that only selects must be read there to run). In a turn's own statement (finishTurnStatement)
 * its CTEs may refer to `held` (one row when this finish settled the turn, none otherwise) and must
 * write only then; in a batch's (finishTurnsStatement), to `settled` (the turns it settles, by
 * their position `n`, with their `input` columns) and must write only for those, their own values
 * being arrays (`turnsArray`) with one element per turn of the batch, null for a turn without any.
 */
export interface FinishExtension {
  ctes: (p: Param) => string;
  columns: string;
}

// A turn finished alone (nothing else of its account in flight: every turn at one connection): the
// same decisions as FINISH for one turn, in a statement with scalar parameters, which measured
// cheaper than FINISH with one-element arrays (docs/design/billing-reservations.md, *Group commit*). The
// thread row is locked (and re-read) before the hold counts as held: a reclaim that settled this
// turn since the statement's snapshot has cleared turn_id, so `t` is empty and nothing is credited
// twice. `unsettled` is read from the snapshot, but with `t` locked nothing else can settle this
// turn's hold (the reclaim needs the same row). Optionally extended (built once per caller, when
// its module loads, so it stays prepared), as the batch's statement is (finishTurnsStatement).
/** The finish statement of a turn finished alone, optionally extended (FinishExtension). */
export function finishTurnStatement(name: string, extension?: FinishExtension): Statement {
  return statement(
    name,
    (p) => `with ${heldCte(p, "unsettled")},
          t as (update ${T.table} set ${T.busyUntil} = null, ${T.turnId} = null, ${T.updatedAt} = now(),
                       ${T.messageCount} = ${T.messageCount} + case when exists (select 1 from unsettled) then ${p("count")}::int else 0 end
                 where ${T.id} = ${p("threadId")} and ${T.turnId} = ${p("reference")} returning ${T.id}),
          ${releaseCte(p, "held as (select 1 as held from unsettled where exists (select 1 from t))")},
          m as (insert into ${M.table} (${M.thread}, ${M.seq}, ${M.role}, ${M.content}, ${M.data}, ${M.createdAt})
                select ${p("threadId")}, ${p("baseSeq")}::int + x.ord::int, x.role, x.content, x.data::jsonb, now()
                  from unnest(${p("roles")}::text[], ${p("contents")}::text[], ${p("data")}::text[]) with ordinality as x(role, content, data, ord)
                 where exists (select 1 from held))${extension ? `,
          ${extension.ctes(p)}` : ""}
     select exists (select 1 from held) as settled, exists (select 1 from t) as leased${extension ? `, ${extension.columns}` : ""}`,
  );
}
const FINISH_ONE = finishTurnStatement("thread-finish-turn");

/** What ends a turn (finishTurn). */
export interface FinishInput {
  threadId: string;
  accountId: string;
  baseSeq: number;
  messages: ChatMessage[];
  release: number;
  reference: string;
  tags: CallTags;
  inputTokens: number;
  outputTokens: number;
}

type Outcome = { settled: boolean; leased: boolean };

/** One turn's finish in its own statement: FINISH_ONE, or a caller's extension of it. */
async function finishOne(pool: pg.Pool, a: FinishInput, extended?: TurnFinishWith): Promise<Outcome> {
  const { rows } = await pool.query<Outcome>(
    (extended?.statement ?? FINISH_ONE).with({
      ...extended?.values,
      ...a.tags,
      inputTokens: a.inputTokens,
      outputTokens: a.outputTokens,
      accountId: a.accountId,
      release: a.release,
      reference: a.reference,
      threadId: a.threadId,
      baseSeq: a.baseSeq,
      roles: a.messages.map((m) => m.role),
      contents: a.messages.map((m) => m.content),
      count: a.messages.length,
      data: a.messages.map(messageData),
    }),
  );
  return rows[0]!;
}

/** A turn on its way to the batcher, with what its caller writes in its finish (TurnFinishWith.batch). */
type Finishing = FinishInput & { extended?: TurnFinishWith };

/**
 * Finishes turns of one account in one statement (see FINISH, or the extended form the turns
 * carry; turns of two different extensions go in one statement each, in turn): per turn, settled,
 * and whether it still held its lease.
 */
async function finishTurns(pool: pg.Pool, turns: Finishing[]): Promise<Outcome[]> {
  if (turns.length === 1) return [await finishOne(pool, turns[0]!, turns[0]!.extended)];
  // Turns without an extension take nulls in any extended statement, so they go with the first.
  const extensions = [...new Set(turns.flatMap((a) => (a.extended?.batch ? [a.extended.batch.statement] : [])))];
  if (extensions.length > 1) {
    const outcomes: Outcome[] = [];
    for (const s of extensions) {
      const mine = turns.flatMap((a, i) => ((a.extended?.batch?.statement ?? extensions[0]) === s ? [i] : []));
      (await finishTurns(pool, mine.map((i) => turns[i]!))).forEach((o, j) => (outcomes[mine[j]!] = o));
    }
    return outcomes;
  }
  // The extension's arrays: one element per turn, null for a turn without one.
  const extension: Record<string, unknown[]> = {};
  for (const key of new Set(turns.flatMap((a) => Object.keys(a.extended?.batch?.values ?? {})))) extension[key] = turns.map((a) => a.extended?.batch?.values[key] ?? null);
  const messages = turns.flatMap((a, i) => a.messages.map((m, j) => ({ n: i + 1, threadId: a.threadId, seq: a.baseSeq + j + 1, m })));
  const { rows } = await pool.query<Outcome>(
    (extensions[0] ?? FINISH).with({
      ...extension,
      accountId: turns[0]!.accountId,
      threadIds: turns.map((a) => a.threadId),
      references: turns.map((a) => a.reference),
      releases: turns.map((a) => a.release),
      counts: turns.map((a) => a.messages.length),
      agentIds: turns.map((a) => a.tags.agentId),
      keyIds: turns.map((a) => a.tags.keyId),
      triggerIds: turns.map((a) => a.tags.triggerId),
      jobIds: turns.map((a) => a.tags.jobId),
      models: turns.map((a) => a.tags.model),
      inputTokens: turns.map((a) => a.inputTokens),
      outputTokens: turns.map((a) => a.outputTokens),
      messageTurns: messages.map((x) => x.n),
      messageThreads: messages.map((x) => x.threadId),
      messageSeqs: messages.map((x) => x.seq),
      roles: messages.map((x) => x.m.role),
      contents: messages.map((x) => x.m.content),
      data: messages.map((x) => messageData(x.m)),
    }),
  );
  return rows;
}

// One batcher per pool, i.e. per process (src/db/orm.ts: one pool per process).
const batchers = new WeakMap<pg.Pool, FinishBatcher<Finishing, Outcome>>();
function batcherFor(pool: pg.Pool): FinishBatcher<Finishing, Outcome> {
  let b = batchers.get(pool);
  if (!b) batchers.set(pool, (b = new FinishBatcher((turns) => finishTurns(pool, turns))));
  return b;
}

/** A turn whose thread is gone (its agent or thread deleted mid-turn): its hold, if still unsettled, handed back whole. */
const RECLAIM_ORPHAN = statement(
  "thread-reclaim-orphan",
  (p) => `with dead as (select ${p("threadId")}::varchar as thread_id, ${p("reference")}::varchar as turn_id where not exists (select 1 from ${T.table} where ${T.id} = ${p("threadId")})),
          ${reclaimCte("dead")}
     select (select count(*) from dead)::int as gone, (select count(*) from reclaimed)::int as holds`,
);

export interface TurnFinishWith {
  /** The turn's own statement (finishTurnStatement), and its extension's parameters. */
  statement: Statement;
  values: Record<string, unknown>;
  /**
   * The same extension for a batch (finishTurnsStatement), and this turn's element of each of its
   * arrays: such a turn joins its account's batch, as an unextended one does. Without it, it
   * finishes alone.
   */
  batch?: { statement: Statement; values: Record<string, unknown> };
  /**
   * Told the statement's outcome as soon as it is known, before the turn's own steps after it:
   * true when it committed and settled the turn (so what the extension wrote is durable), false
   * when it failed or settled nothing (the turn then fails).
   */
  onOutcome?: (settled: boolean) => void;
}

/**
 * Ends a turn: appends the messages (in order, after `baseSeq`), releases the lease and credits
 * back `release` micro-USD of the hold, all in one statement so a crash cannot keep one without
 * the other. Concurrent turns of one account share that statement (FinishBatcher: one lock of the
 * balance row and one flush for all of them), extended ones too when their extension has a batch
 * form; each is decided alone. A synchronous commit: it also makes the turn's asynchronously committed hold (and
 * new thread) durable before the answer leaves (WAL is flushed in order). Nothing is saved or
 * credited, and the turn fails, when:
 * - the thread is gone (its agent or the thread was deleted mid-turn): the hold is handed back
 *   whole and the turn fails with not_found (the answer has nowhere to be stored, so it is not
 *   given or charged);
 * - the turn no longer holds the lease (it outlived its lease and the reclaim settled it, or a
 *   database crash lost the continuation's open statement, lease and hold together), or the hold
 *   is not there (lost to a database crash since it was placed): service_unavailable; the lease
 *   is released when it is still this turn's. The client must not get an answer whose thread is
 *   not stored.
 */
export async function finishTurn(
  pool: pg.Pool,
  a: FinishInput,
  /** What the caller writes in the same statement (TurnFinishWith): without a batch form, such a turn finishes alone. */
  extended?: TurnFinishWith,
): Promise<void> {
  let outcome: Outcome;
  try {
    outcome = extended && !extended.batch ? await finishOne(pool, a, extended) : await batcherFor(pool).finish(extended ? { ...a, extended } : a);
  } catch (err) {
    extended?.onOutcome?.(false);
    throw err;
  }
  extended?.onOutcome?.(outcome.settled);
  if (outcome.settled) return;
  if (!outcome.leased) {
    const orphan = await pool.query<{ gone: number; holds: number }>(RECLAIM_ORPHAN.with({ threadId: a.threadId, reference: a.reference }));
    // A thread that never existed was lost with its hold to a database crash (503 below).
    if (orphan.rows[0]!.holds > 0) {
      throw new AppError("not_found", "The agent or thread was deleted while this turn ran; nothing was stored or charged", { param: "thread_id" });
    }
    if (!orphan.rows[0]!.gone) {
      throw new AppError("service_unavailable", "This turn lost its thread lease (it outlived it, or the database restarted and lost it) and was settled without an answer; nothing was charged, retry the request", { headers: { "Retry-After": "1" } });
    }
  }
  throw new AppError("service_unavailable", "The database restarted during this request and lost its hold; nothing was charged, retry the request", { headers: { "Retry-After": "1" } });
}
