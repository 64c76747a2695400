/** API keys the user chose to remember in this browser (local storage, per agent) to fill in the code examples. */

export interface Remembered {
  key: string;
  name: string;
  prefix: string;
}
const rememberKey = (agentId: string) => `agw.rememberedKey.${agentId}`;
export function getRemembered(agentId: string): Remembered | null {
  try {
    return JSON.parse(localStorage.getItem(rememberKey(agentId)) ?? "null");
  } catch {
    return null;
  }
}
export function setRemembered(agentId: string, r: Remembered | null) {
  if (r) localStorage.setItem(rememberKey(agentId), JSON.stringify(r));
  else localStorage.removeItem(rememberKey(agentId));
  window.dispatchEvent(new Event("agw-remembered"));
}
