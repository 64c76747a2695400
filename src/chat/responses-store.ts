import type pg from "pg";
import { AppError } from "../errors/app-error.js";

/** The stored Responses API objects (table `responses`): GET by id and previous_response_id → its thread. */

export async function saveResponse(pool: pg.Pool, r: { id: string; accountId: string; agentId: string; threadId: string; body: Record<string, unknown> }): Promise<void> {
  await pool.query({
    name: "response-save",
    text: "insert into responses (id, account_id, agent_id, thread_id, body, created_at) values ($1, $2, $3, $4, $5, now())",
    values: [r.id, r.accountId, r.agentId, r.threadId, JSON.stringify(r.body)],
  });
}

/** A response of this agent, or 404 (another agent's responses do not exist for this key). */
export async function loadResponse(pool: pg.Pool, id: string, accountId: string, agentId: string, param?: string): Promise<{ threadId: string; body: Record<string, unknown> }> {
  const notFound = () => new AppError("not_found", `Response with id '${id}' not found.`, param ? { param } : {});
  // Only our own id shape can exist; anything else (a NUL byte would make PostgreSQL refuse the query) is simply unknown.
  if (!/^resp_[0-9A-Za-z]{1,64}$/.test(id)) throw notFound();
  const { rows } = await pool.query<{ thread_id: string; body: Record<string, unknown> }>({
    name: "response-load",
    text: "select thread_id, body from responses where id = $1 and account_id = $2 and agent_id = $3",
    values: [id, accountId, agentId],
  });
  if (!rows[0]) throw notFound();
  return { threadId: rows[0].thread_id, body: rows[0].body };
}
