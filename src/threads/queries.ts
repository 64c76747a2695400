import type pg from "pg";
import { CREATED_CURSOR, createdBefore, createdCursorColumn, decodeCursor, toConnection, type Connection } from "../graphql/connection.js";

/** Read-side SQL of threads for the management API (the chat hot path's SQL is in store.ts). */

export interface ThreadRow {
  id: string;
  agentId: string;
  createdAt: Date;
  updatedAt: Date;
}
export interface MessageRow {
  seq: number;
  role: string;
  content: string;
  createdAt: Date;
  /** Tool calls, the call a tool result answers, image parts (store.ts MessageData). */
  data: { toolCalls?: { id: string; name: string; arguments: string }[]; toolCallId?: string } | null;
}

const MESSAGE_COLUMNS = `seq, role, content, data, created_at as "createdAt"`;

const THREAD_COLUMNS = `id, agent_id as "agentId", created_at as "createdAt", updated_at as "updatedAt"`;

export async function findThread(db: pg.Pool, accountId: string, id: string): Promise<ThreadRow | undefined> {
  const { rows } = await db.query<ThreadRow>(`select ${THREAD_COLUMNS} from threads where id = $1 and account_id = $2`, [id, accountId]);
  return rows[0];
}

/** Messages in conversation order (seq ascending); the cursor is the seq. */
export async function pageMessages(db: pg.Pool, threadId: string, first: number, after: string | null | undefined): Promise<Connection<MessageRow>> {
  const cursor = decodeCursor(after, ["int32"] as const); // messages.seq is an integer
  const { rows } = await db.query<MessageRow>(
    `select ${MESSAGE_COLUMNS} from messages where thread_id = $1 and seq > $2 order by seq limit $3`,
    [threadId, cursor?.[0] ?? -1, first + 1],
  );
  return toConnection(rows, first, (r) => [r.seq], (r) => r);
}

/** An agent's threads, newest first. */
export async function pageAgentThreads(db: pg.Pool, accountId: string, agentId: string, first: number, after: string | null | undefined): Promise<Connection<ThreadRow>> {
  const cursor = decodeCursor(after, CREATED_CURSOR);
  const params: unknown[] = [accountId, agentId];
  let keyset = "";
  if (cursor) {
    params.push(cursor[0], cursor[1]);
    keyset = `and ${createdBefore("threads", 3, 4)}`;
  }
  params.push(first + 1);
  const { rows } = await db.query<ThreadRow & { cursorUs: number }>(
    `select ${THREAD_COLUMNS}, ${createdCursorColumn("threads")} from threads
     where account_id = $1 and agent_id = $2 ${keyset} order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  return toConnection(rows, first, (r) => [r.cursorUs, r.id], ({ cursorUs: _c, ...t }) => t);
}
