/** What a chat turn needs of an agent (read on the hot path by key authentication and by runs). */
export interface AgentInfo {
  id: string;
  accountId: string;
  instructions: string;
  defaultModel: string;
  allowedModels: string[] | null;
}
