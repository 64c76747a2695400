import { useId, useState, type FormEvent } from "react";
import { api, type Trigger } from "../api";
import { useAction } from "../hooks/useAction";
import { CopyField } from "./CopyField";
import { ErrorBox } from "./ErrorBox";

export function TriggerDetailsPanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(trigger.description ?? "");
  const { busy, error, run } = useAction();
  const uid = useId();
  const save = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      const t = await api.updateTrigger(trigger.id, value.trim() || null);
      onChange({ description: t.description });
      setEditing(false);
    });
  };
  return (
    <section className="panel" aria-labelledby="details-h">
      <h2 id="details-h">Webhook</h2>
      <CopyField label="Webhook URL" value={trigger.webhookUrl} />
      {editing ? (
        <form onSubmit={save} className="inline-form">
          <label htmlFor={`${uid}-d`}>Description</label>
          <input id={`${uid}-d`} value={value} onChange={(e) => setValue(e.target.value)} maxLength={2000} autoFocus />
          <button type="submit" className="btn primary" disabled={busy}>
            Save
          </button>
          <button type="button" className="btn" onClick={() => (setEditing(false), setValue(trigger.description ?? ""))}>
            Cancel
          </button>
        </form>
      ) : (
        <p>
          <strong>Description:</strong> {trigger.description || <span className="muted">none</span>}{" "}
          <button type="button" className="btn small" onClick={() => setEditing(true)}>
            Edit description
          </button>
        </p>
      )}
      <ErrorBox error={error} />
      <p className="help">
        Bodies must be JSON (<code>Content-Type: application/json</code>) of at most 1 MB. The call answers <code>202</code> with a <code>job_id</code>; poll{" "}
        <code>/api/agent-run-jobs/&lt;job_id&gt;/status</code> and <code>/result</code> with the same <code>x-trigger-secret</code>.
      </p>
      {trigger.secret ? (
        <CopyField
          label="Test command"
          multiline
          value={`curl -X POST '${trigger.webhookUrl}' \\\n  -H 'Content-Type: application/json' \\\n  -H 'x-trigger-secret: ${trigger.secret}' \\\n  -d '{"hello": "world"}'`}
        />
      ) : null}
    </section>
  );
}
