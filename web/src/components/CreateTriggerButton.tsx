import { useId, useState, type FormEvent } from "react";
import { api } from "../api";
import { useAction } from "../hooks/useAction";
import { go } from "../router";
import { CopyField } from "./CopyField";
import { Dialog } from "./Dialog";
import { FormActions } from "./FormActions";

export function CreateTriggerButton({ agentId, disabled }: { agentId: string; disabled?: boolean }) {
  const [open, setOpen] = useState(false);
  const [description, setDescription] = useState("");
  const { busy, error, setError, run } = useAction();
  const [created, setCreated] = useState<Awaited<ReturnType<typeof api.createTrigger>> | null>(null);
  const uid = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      const c = await api.createTrigger(agentId, description.trim() || null);
      setOpen(false);
      setDescription("");
      setCreated(c);
    });
  };
  return (
    <>
      <button type="button" className="btn primary" disabled={disabled} onClick={() => (setOpen(true), setError(undefined))}>
        Create trigger
      </button>
      <Dialog open={open} title="Create a trigger" onClose={() => setOpen(false)}>
        <form onSubmit={submit}>
          <label htmlFor={`${uid}-desc`}>Description (optional)</label>
          <input id={`${uid}-desc`} value={description} onChange={(e) => setDescription(e.target.value)} placeholder="e.g. New orders from the shop" maxLength={2000} />
          <p className="help">What sends to this webhook and why. A new trigger is active at once.</p>
          <FormActions error={error} busy={busy} onCancel={() => setOpen(false)} submit="Create trigger" busyLabel="Creating…" />
        </form>
      </Dialog>
      <Dialog open={!!created} title="Trigger created" onClose={() => (go(`triggers/${created!.trigger.id}`), setCreated(null))} wide>
        {created ? (
          <div>
            <p>POST JSON to the webhook URL with the secret in <code>x-trigger-secret</code>. You can copy the secret again later on the trigger's page.</p>
            <CopyField label="Webhook URL" value={created.webhookUrl} />
            <CopyField label="Secret" value={created.secret} />
            <CopyField label="Test command" value={created.testCommand} multiline />
            <details>
              <summary>Signed variant (X-Service-Signature with a timestamp)</summary>
              <CopyField label="Signed test command" value={created.signedTestCommand} multiline />
            </details>
            <div className="actions">
              <button type="button" className="btn primary" data-autofocus onClick={() => (go(`triggers/${created.trigger.id}`), setCreated(null))}>
                Open the trigger
              </button>
            </div>
          </div>
        ) : null}
      </Dialog>
    </>
  );
}
