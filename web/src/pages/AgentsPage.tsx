import { api } from "../api";
import { Empty } from "../components/Empty";
import { ErrorBox } from "../components/ErrorBox";
import { useAsync } from "../hooks/useAsync";

export function AgentsPage() {
  const { data, error, loading } = useAsync(() => api.agents(), []);
  return (
    <section>
      <div className="page-head">
        <h1>Agents</h1>
        <a className="btn primary" href="#/agents/new">
          New agent
        </a>
      </div>
      <ErrorBox error={error} />
      {loading && !data ? <p className="muted">Loading…</p> : null}
      {data && data.length === 0 ? (
        <Empty>
          <p>No agents yet.</p>
          <p>
            An agent answers on the OpenAI-compatible chat endpoint with its own keys; give it a script and it can also run from webhooks.{" "}
            <a href="#/agents/new">Create your first agent</a>.
          </p>
        </Empty>
      ) : null}
      {data && data.length > 0 ? (
        <ul className="cards" aria-label="Agents">
          {data.map((a) => (
            <li key={a.id} className="card agent-card">
              <h2>
                <a href={`#/agents/${a.id}`}>{a.name}</a>
              </h2>
              <p className="meta">
                <span className="badge">{a.kind === "AUTOMATION" ? "automation (script)" : "chat"}</span> <span className="mono">{a.defaultModel}</span>
              </p>
              <p className="meta">
                {a.apiKeys.length} key{a.apiKeys.length === 1 ? "" : "s"} · {a.triggers.length} trigger{a.triggers.length === 1 ? "" : "s"}
              </p>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
