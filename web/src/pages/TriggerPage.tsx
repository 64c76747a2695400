import { api, type Trigger } from "../api";
import { CallbackPanel } from "../components/CallbackPanel";
import { ErrorBox } from "../components/ErrorBox";
import { InactiveBadge } from "../components/InactiveBadge";
import { LogsPanel } from "../components/LogsPanel";
import { SecretPanel } from "../components/SecretPanel";
import { TestTool } from "../components/TestTool";
import { TriggerActivePanel } from "../components/TriggerActivePanel";
import { TriggerDetailsPanel } from "../components/TriggerDetailsPanel";
import { useAsync } from "../hooks/useAsync";

export function TriggerPage({ id, onRun }: { id: string; onRun: () => Promise<void> }) {
  const { data: trigger, error, loading, setData } = useAsync(() => api.trigger(id), [id]);
  if (loading && !trigger) return <p className="muted">Loading…</p>;
  if (error) return <ErrorBox error={error} />;
  if (!trigger)
    return (
      <section>
        <h1>Trigger not found</h1>
        <p>
          It may have been deleted with its agent. <a href="#/triggers">Back to triggers</a>
        </p>
      </section>
    );
  const patch = (p: Partial<Trigger>) => setData({ ...trigger, ...p });
  return (
    <section>
      <p className="crumbs">
        <a href="#/triggers">Triggers</a> / {trigger.agent ? <a href={`#/agents/${trigger.agent.id}`}>{trigger.agent.name}</a> : null} /
      </p>
      <div className="page-head">
        <h1>{trigger.description || "Trigger"}</h1>
        <span data-testid="trigger-state">
          <InactiveBadge active={trigger.active} />
        </span>
      </div>
      <TriggerActivePanel trigger={trigger} onChange={patch} />
      <TriggerDetailsPanel trigger={trigger} onChange={patch} />
      <SecretPanel trigger={trigger} onChange={patch} />
      <CallbackPanel trigger={trigger} onChange={patch} />
      <TestTool trigger={trigger} onRun={onRun} />
      <LogsPanel triggerId={trigger.id} initial={trigger.logs} onChange={() => void onRun()} />
    </section>
  );
}
