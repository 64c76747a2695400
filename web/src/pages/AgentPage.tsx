import { useState, type MouseEvent } from "react";
import { api } from "../api";
import { AgentForm } from "../components/AgentForm";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { CreateTriggerButton } from "../components/CreateTriggerButton";
import { ErrorBox } from "../components/ErrorBox";
import { ExamplesPanel } from "../components/ExamplesPanel";
import { ProtocolsPanel } from "../components/ProtocolsPanel";
import { KeysPanel } from "../components/KeysPanel";
import { SchedulesPanel } from "../components/SchedulesPanel";
import { ThreadsPanel } from "../components/ThreadsPanel";
import { TriggerList } from "../components/TriggerList";
import { useAsync } from "../hooks/useAsync";
import { setRemembered } from "../remembered";
import { go } from "../router";

export function AgentPage({ id }: { id: string }) {
  const { data: agent, error, loading, reload, setData } = useAsync(() => api.agent(id), [id]);
  const [confirmDelete, setConfirmDelete] = useState(false);
  if (loading && !agent) return <p className="muted">Loading…</p>;
  if (error) return <ErrorBox error={error} />;
  if (!agent)
    return (
      <section>
        <h1>Agent not found</h1>
        <p>
          It may have been deleted. <a href="#/agents">Back to agents</a>
        </p>
      </section>
    );
  return (
    <section>
      <p className="crumbs">
        <a href="#/agents">Agents</a> /
      </p>
      <div className="page-head">
        <h1>{agent.name}</h1>
        <span className="badge">{agent.kind === "AUTOMATION" ? "automation (script)" : "chat"}</span>
      </div>
      <nav className="toc" aria-label="On this page">
        <a href="#keys" onClick={jump("keys")}>
          API keys
        </a>
        <a href="#examples" onClick={jump("examples")}>
          Code examples
        </a>
        <a href="#protocols" onClick={jump("protocols")}>
          A2A and MCP
        </a>
        <a href="#agent-triggers" onClick={jump("agent-triggers")}>
          Triggers
        </a>
        {agent.kind === "AUTOMATION" ? (
          <a href="#schedules" onClick={jump("schedules")}>
            Schedules
          </a>
        ) : null}
        <a href="#settings" onClick={jump("settings")}>
          Settings
        </a>
      </nav>

      <KeysPanel agent={agent} reload={reload} />
      <ExamplesPanel agent={agent} />
      <ProtocolsPanel agent={agent} />

      <section className="panel" id="agent-triggers" aria-labelledby="agent-triggers-h">
        <div className="panel-head">
          <h2 id="agent-triggers-h">Triggers</h2>
          <CreateTriggerButton agentId={agent.id} />
        </div>
        {!agent.script ? (
          <p className="help">This agent has no script: a webhook's payload is sent to its model as a user message and the answer is the job's result.</p>
        ) : null}
        <TriggerList triggers={agent.triggers} showAgent={false} empty="No triggers for this agent yet. Create one to get a webhook URL and a secret." />
      </section>

      {agent.kind === "AUTOMATION" ? <SchedulesPanel agentId={agent.id} /> : null}

      <ThreadsPanel agentId={agent.id} />

      <section className="panel" id="settings" aria-labelledby="settings-h">
        <h2 id="settings-h">Settings</h2>
        <AgentForm agent={agent} submitLabel="Save changes" onSaved={(a) => setData(a)} />
      </section>

      <section className="panel danger-zone" aria-labelledby="danger-h">
        <h2 id="danger-h">Delete agent</h2>
        <p>Deleting the agent also deletes its keys (they stop working at once), threads, triggers and schedules.</p>
        <button type="button" className="btn danger" onClick={() => setConfirmDelete(true)}>
          Delete agent…
        </button>
      </section>
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${agent.name}?`}
        body={<p>Its {agent.apiKeys.length} key(s) stop working at once and its threads and {agent.triggers.length} trigger(s) are deleted. This cannot be undone.</p>}
        confirmLabel="Delete agent"
        onClose={() => setConfirmDelete(false)}
        onConfirm={async () => {
          await api.deleteAgent(agent.id);
          setRemembered(agent.id, null);
          go("agents");
        }}
      />
    </section>
  );
}

const jump = (id: string) => (e: MouseEvent) => {
  e.preventDefault();
  const el = document.getElementById(id);
  el?.scrollIntoView({ behavior: "smooth", block: "start" });
  el?.querySelector<HTMLElement>("h2")?.setAttribute("tabindex", "-1");
  el?.querySelector<HTMLElement>("h2")?.focus({ preventScroll: true });
};
