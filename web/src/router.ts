/**
 * Navigation: hash routes (#/agents, #/agents/new, #/agents/:id, #/triggers, #/triggers/:id, #/triggers/:id/jobs,
 * #/threads/:id, #/jobs, #/jobs/failed (or another status), #/jobs/:id, #/usage, #/tokens, #/account). Pages navigate with `go`; the shell reads `currentRoute`.
 */
export const DEFAULT_ROUTE = "agents";

export function currentRoute(): string[] {
  return (location.hash.replace(/^#\/?/, "") || DEFAULT_ROUTE).split("/").filter(Boolean);
}

export const go = (path: string) => {
  location.hash = `#/${path.replace(/^\//, "")}`;
};
