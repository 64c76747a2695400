import { api, type Trigger } from "../api";
import { useAction } from "../hooks/useAction";
import { ErrorBox } from "./ErrorBox";

export function TriggerActivePanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const { busy, error, run } = useAction();
  const toggle = () =>
    run(async () => {
      const t = await api.setTriggerActive(trigger.id, !trigger.active);
      onChange({ active: t.active });
    });
  return (
    <section className="panel" aria-labelledby="active-h">
      <h2 id="active-h" className="sr-only">
        Activity
      </h2>
      <div className="switch-row">
        <button type="button" role="switch" aria-checked={trigger.active} className={`switch${trigger.active ? " on" : ""}`} onClick={toggle} disabled={busy} id="active-switch">
          <span className="knob" aria-hidden="true" />
        </button>
        <label htmlFor="active-switch">{trigger.active ? "Active: webhooks are accepted" : "Inactive: webhooks are rejected (403 trigger_inactive)"}</label>
      </div>
      <ErrorBox error={error} />
    </section>
  );
}
