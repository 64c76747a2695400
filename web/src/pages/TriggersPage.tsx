import { useId, useState } from "react";
import { api } from "../api";
import { CreateTriggerButton } from "../components/CreateTriggerButton";
import { ErrorBox } from "../components/ErrorBox";
import { TriggerList } from "../components/TriggerList";
import { useAsync } from "../hooks/useAsync";

export function TriggersPage() {
  const { data, error, loading } = useAsync(() => api.triggers(), []);
  const agents = useAsync(() => api.agents(), []);
  const [agentId, setAgentId] = useState("");
  const uid = useId();
  return (
    <section>
      <div className="page-head">
        <h1>Triggers</h1>
      </div>
      <p className="help">Every webhook of every agent. A trigger starts a run of its agent for each JSON POST to its URL.</p>
      {agents.data && agents.data.length > 0 ? (
        <div className="inline-form">
          <label htmlFor={`${uid}-agent`}>New trigger for</label>
          <select id={`${uid}-agent`} value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">Choose an agent…</option>
            {agents.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
          <CreateTriggerButton agentId={agentId} disabled={!agentId} />
        </div>
      ) : null}
      <ErrorBox error={error} />
      {loading && !data ? <p className="muted">Loading…</p> : null}
      {data ? (
        <TriggerList
          triggers={data}
          showAgent
          empty={
            agents.data?.length === 0 ? (
              <>
                No triggers yet, and no agents. <a href="#/agents/new">Create an agent</a> first.
              </>
            ) : (
              "No triggers yet. Choose an agent above and create one."
            )
          }
        />
      ) : null}
    </section>
  );
}
