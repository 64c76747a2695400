import type pg from "pg";
import { holdCte, KEY_HELD_COLUMN, keyLimitRefused, undoKeyHold, type CallTags, type HoldOutcome } from "../billing/ledger.js";
import { holdMicrosSql, type promptParams } from "../billing/prices.js";
import { ASYNC_COMMIT_CTE, statement, type Param, type Statement } from "../db/statement.js";
import type { ChatMessage } from "../providers/index.js";
import { historyFrom, leaseCte, newThreadCte, OPEN_TOOL_CALLS_SQL, type MessageData } from "../threads/store.js";
import { rateLimitCte, rateLimitValues } from "./rate-limit.js";

/**
 * The statement that starts a chat turn on a new thread: (rate-limit count +) hold + thread, in
 * one round trip. No thread is created for a request that is refused for balance, a key deleted a
 * moment ago, or (with the rate limit) a count over the key's limit; a refused request still
 * counts in its window.
 *
 * Both commit asynchronously (ASYNC_COMMIT_CTE): the hold, the thread and the count are visible to
 * every other transaction at once, so holds and counts serialise exactly as with a synchronous
 * commit, and the turn's synchronous finish (threads/store.ts `finishTurn`) makes them durable
 * before the answer leaves. A database crash in between may lose them; the finish then refuses
 * to settle a hold that is not there (docs/design/billing-reservations.md, option B).
 */
const openThread = (rateLimited: boolean, ext?: OpenExtension) =>
  statement(
    `chat-open-thread${rateLimited ? "-rate-limited" : ""}${ext ? `-${ext.name}` : ""}`,
    (p) => `with ${asyncCommit(ext)}${rateLimited ? `${rateLimitCte(p)}, ${holdCte(p, `(select points from rate_limit) <= ${p("rateLimit")}::int`)}` : holdCte(p)}, ${newThreadCte(p, "hold")}${extensionCtes(p, ext)}
     select exists (select 1 from hold) as ok, ${KEY_HELD_COLUMN}, ${rateLimited ? "(select points from rate_limit) as points, (select expire from rate_limit) as expire, " : ""}${asyncCommitColumn(ext)}`,
  );

/**
 * What a caller writes with a turn's open, in the open's own statement (no round trip, no second
 * connection of its own): CTEs that run when the hold was placed (`exists (select 1 from hold)`),
 * committed with the open. Its parameters are the caller's (`TurnOpenWith.values`).
 */
export interface OpenExtension {
  name: string;
  ctes: (p: Param) => string;
  /**
   * A synchronous commit: what it writes must be durable once the open returns (an id that
   * leaves before the turn's finish), and so are the open's hold and thread with it.
   */
  durable?: boolean;
}
const extensionCtes = (p: Param, ext?: OpenExtension) => (ext ? `,\n          ${ext.ctes(p)}` : "");
const asyncCommit = (ext?: OpenExtension) => (ext?.durable ? "" : `${ASYNC_COMMIT_CTE}, `);
const asyncCommitColumn = (ext?: OpenExtension) => (ext?.durable ? "null as async_commit" : "(select async_commit from async_commit)");

/** The open statements of one extension (built once per caller, when its module loads: they stay prepared). */
export interface OpenStatements {
  thread: Statement;
  threadRateLimited: Statement;
  continuation: Statement;
  continuationRateLimited: Statement;
}
export function openStatements(ext?: OpenExtension): OpenStatements {
  return { thread: openThread(false, ext), threadRateLimited: openThread(true, ext), continuation: continuation(false, ext), continuationRateLimited: continuation(true, ext) };
}
/** An extended open: its statements and the extension's own parameters. */
export interface TurnOpenWith {
  statements: OpenStatements;
  values: Record<string, unknown>;
}

export async function openThreadWithHold(
  pool: pg.Pool,
  a: {
    threadId: string;
    accountId: string;
    agentId: string;
    hold: number;
    reference: string;
    /** The call's ledger tags; `keyId` there also makes the hold re-check the key exists. */
    tags: CallTags;
    leaseMs: number;
    rateLimit?: { keyId: string; limit: number };
  },
  extended?: TurnOpenWith,
): Promise<{ ok: boolean; keyLimited: boolean; rateLimit?: { points: number; expire: number; now: number } }> {
  const statements = extended?.statements ?? PLAIN;
  const values = { ...extended?.values, ...a.tags, threadId: a.threadId, accountId: a.accountId, agentId: a.agentId, hold: a.hold, reference: a.reference, leaseMs: a.leaseMs };
  if (!a.rateLimit) {
    const { rows } = await pool.query<HoldOutcome>(statements.thread.with(values));
    if (!rows[0]!.ok && rows[0]!.key_held && a.tags.keyId) await undoKeyHold(pool, a.tags.keyId, a.hold);
    return { ok: rows[0]!.ok, keyLimited: keyLimitRefused(rows[0]!) };
  }
  const now = Date.now();
  const { rows } = await pool.query<HoldOutcome & { points: number; expire: number }>(
    statements.threadRateLimited.with({ ...values, ...rateLimitValues(a.rateLimit.keyId, now), rateLimit: a.rateLimit.limit }),
  );
  const row = rows[0]!;
  if (!row.ok && row.key_held) await undoKeyHold(pool, a.tags.keyId ?? a.rateLimit.keyId, a.hold);
  return { ok: row.ok, keyLimited: keyLimitRefused(row), rateLimit: { points: row.points, expire: row.expire, now } };
}

/**
 * The statement that starts a chat turn on an existing thread, in one round trip before the
 * upstream call: (rate-limit count +) the thread's lease for this turn + its history + the hold
 * sized on that history (billing/prices.ts `holdMicrosSql`) + the hold's ledger row, with the key
 * re-checked (exists, not expired, spend limit) as for a new thread. Each step runs only when the
 * one before it succeeded: no lease over the rate limit, no hold without the lease, nor when the
 * request's leading tool results answer no open tool call of the history (that request gets 400
 * and must not hold money meanwhile), nor when the history read is older than the lease taken
 * (`complete`). Locks are taken in the order every other statement takes them: the key's window
 * row, the thread row, the account row, the key's spend row (a finish takes the thread before the
 * account too, so the two cannot deadlock); a refused lease never locks the account row. Committed asynchronously like the new-thread open; the finish's
 * synchronous commit makes lease and hold durable before the answer leaves, and settles only a
 * hold still in the ledger (docs/design/billing-reservations.md, "A continuation in one statement").
 */
const continuation = (rateLimited: boolean, ext?: OpenExtension) =>
  statement(`chat-open-continuation${rateLimited ? "-rate-limited" : ""}${ext ? `-${ext.name}` : ""}`, (p) => {
    const stored = {
      bytes: "(select coalesce(sum(bytes), 0)::bigint from history)",
      messages: "(select count(*) from history)",
      extraTokens: `(select coalesce(sum(images), 0)::bigint from history) * ${p("imageHoldTokens")}::bigint`,
    };
    const toolResults = `(cardinality(${p("toolResultIds")}::text[]) = 0 or ${p("toolResultIds")}::text[] <@ ${OPEN_TOOL_CALLS_SQL})`;
    // The lease re-reads a row it waited for (a finish of this thread committing); the history comes from the statement's older snapshot.
    const complete = "((select count(*) from history) = (select message_count from lease))";
    return `with ${asyncCommit(ext)}${rateLimited ? `${rateLimitCte(p)}, ` : ""}${leaseCte(p, rateLimited ? `(select points from rate_limit) <= ${p("rateLimit")}::int` : undefined)},
          turn_hold as (select ${holdMicrosSql(p, stored)} as micros),
          ${holdCte(p, `${complete} and ${toolResults}`, { amount: "(select micros from turn_hold)", lockAfter: "exists (select 1 from lease)" })}${extensionCtes(p, ext)}
     select ${asyncCommitColumn(ext)}, exists (select 1 from lease) as leased, (select message_count from lease) as message_count, coalesce(${complete}, false) as complete,
            exists (select 1 from hold) as ok, ${KEY_HELD_COLUMN}, ${toolResults} as tool_results_ok, (select micros from turn_hold)::text as hold,
            ${rateLimited ? "(select points from rate_limit) as points, (select expire from rate_limit) as expire," : ""} ${HISTORY_JSON} as history`;
  });
// The history comes back as one json value in the statement's one row (`historyFrom`), not as a
// row per message repeating every other column: measured 0.05 ms less per continuation of 18
// messages (docs/design/billing-reservations.md, "Where a continuation's extra time went").
const HISTORY_JSON = "(select json_agg(json_build_array(role, content, data) order by seq) from history)";
const PLAIN = openStatements();

export interface OpenedContinuation {
  /** False: the thread was not leased (busy, missing, or the count was over the limit); nothing else was done. */
  leased: boolean;
  /**
   * False (with `leased`): the lease waited for a finish of this thread, and the history was read
   * from before that finish committed (the statement's snapshot). Nothing was held; read again.
   */
  complete: boolean;
  messageCount: number;
  history: ChatMessage[];
  /** The hold was placed (`hold` micro-USD, reference `turnId`). */
  ok: boolean;
  keyLimited: boolean;
  /** Whether the statement found the request's leading tool results answering open calls of the history. */
  toolResultsOk: boolean;
  /** The hold the prompt (history + request) needs, placed or not. */
  hold: number;
  rateLimit?: { points: number; expire: number; now: number };
}

export async function openContinuation(
  pool: pg.Pool,
  a: {
    threadId: string;
    accountId: string;
    agentId: string;
    leaseMs: number;
    turnId: string;
    /** The call's ledger tags; `keyId` there also makes the hold re-check the key. */
    tags: CallTags;
    /** The request's part of the hold (system text, request messages, tools), as `promptParams` gives it. */
    prompt: ReturnType<typeof promptParams>;
    /** What each stored image adds to the prompt's worst case. */
    imageHoldTokens: number;
    /** The tool-call ids the request's leading tool results answer (chat/request.ts `leadingToolResultIds`). */
    toolResultIds: string[];
    rateLimit?: { keyId: string; limit: number };
  },
  extended?: TurnOpenWith,
): Promise<OpenedContinuation> {
  const statements = extended?.statements ?? PLAIN;
  const values = {
    ...extended?.values,
    ...a.tags,
    ...a.prompt,
    threadId: a.threadId,
    accountId: a.accountId,
    agentId: a.agentId,
    leaseMs: a.leaseMs,
    turnId: a.turnId,
    reference: a.turnId,
    imageHoldTokens: a.imageHoldTokens,
    toolResultIds: a.toolResultIds,
  };
  type Row = HoldOutcome & { leased: boolean; complete: boolean; message_count: number | null; tool_results_ok: boolean; hold: string; points: number; expire: number; history: [string, string, MessageData | null][] | null };
  const now = Date.now();
  const { rows } = await pool.query<Row>(
    a.rateLimit ? statements.continuationRateLimited.with({ ...values, ...rateLimitValues(a.rateLimit.keyId, now), rateLimit: a.rateLimit.limit }) : statements.continuation.with(values),
  );
  const row = rows[0]!;
  const hold = Number(row.hold);
  if (!row.ok && row.key_held && a.tags.keyId) await undoKeyHold(pool, a.tags.keyId, hold);
  return {
    leased: row.leased,
    complete: row.complete,
    messageCount: row.message_count ?? 0,
    history: historyFrom(row.history),
    ok: row.ok,
    keyLimited: keyLimitRefused(row),
    toolResultsOk: row.tool_results_ok,
    hold,
    ...(a.rateLimit ? { rateLimit: { points: row.points, expire: row.expire, now } } : {}),
  };
}
