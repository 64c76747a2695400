/** What a chat turn needs of an agent (read on the hot path by key authentication and by runs). */
export interface AgentInfo {
  id: string;
  accountId: string;
  instructions: string;
  defaultModel: string;
  allowedModels: string[] | null;
  /** Tried in order when the chosen model's upstream fails before answering (docs/guides/chat.md). */
  fallbackModels: string[] | null;
}

/** What an agent's public A2A card shows: nothing secret (no instructions, no script). */
export interface PublicAgent {
  id: string;
  name: string;
  automation: boolean;
  updatedAt: Date;
}

export async function findPublicAgent(db: { query: (text: string, params: unknown[]) => Promise<{ rows: unknown[] }> }, id: string): Promise<PublicAgent | undefined> {
  const { rows } = await db.query(`select id, name, script is not null as automation, updated_at as "updatedAt" from agents where id = $1`, [id]);
  return rows[0] as PublicAgent | undefined;
}
