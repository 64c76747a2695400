/** What a chat turn needs of an agent (read on the hot path by key authentication and by runs). */
export interface AgentInfo {
  id: string;
  accountId: string;
  instructions: string;
  defaultModel: string;
  allowedModels: string[] | null;
  /** Tried in order when the chosen model's upstream fails before answering (DESIGN §19). */
  fallbackModels: string[] | null;
}
