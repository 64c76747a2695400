import { useId, useState, type FormEvent } from "react";
import { api, type Delivery, type Trigger } from "../api";
import { useAction } from "../hooks/useAction";
import { ConfirmDialog } from "./ConfirmDialog";
import { CopyField } from "./CopyField";
import { DeliveriesTable } from "./DeliveriesTable";
import { ErrorBox } from "./ErrorBox";
import { Notice } from "./Notice";
import { Time } from "./Time";

/** Completion callbacks of a trigger: the URL, the signing secret (rotate with a 24 h grace), a test event. */
export function CallbackPanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const [url, setUrl] = useState(trigger.callbackUrl ?? "");
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [graceUntil, setGraceUntil] = useState<string | null>(null);
  const [test, setTest] = useState<{ webhookId: string; attempts: Delivery[] } | null>(null);
  const save = useAction();
  const send = useAction();
  const uid = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    return save.run(async () => {
      const t = await api.setCallbackUrl(trigger.id, url.trim() || null);
      onChange({ callbackUrl: t.callbackUrl, callbackSecret: t.callbackSecret });
      setUrl(t.callbackUrl ?? "");
    });
  };
  return (
    <section className="panel" aria-labelledby="callback-h">
      <h2 id="callback-h">Completion callback</h2>
      <p className="help">
        When a run ends, a signed <code>job.done</code> or <code>job.failed</code> event is POSTed here (Standard Webhooks headers <code>webhook-id</code>,{" "}
        <code>webhook-timestamp</code>, <code>webhook-signature</code>), retried with backoff for about a day until the receiver answers 2xx.
      </p>
      <form onSubmit={submit} className="inline-form">
        <label htmlFor={`${uid}-u`}>Callback URL</label>
        <input id={`${uid}-u`} className="mono" value={url} placeholder="https://example.com/hooks/agent" onChange={(e) => setUrl(e.target.value)} data-testid="callback-url" />
        <button type="submit" className="btn primary" disabled={save.busy || url.trim() === (trigger.callbackUrl ?? "")}>
          Save callback URL
        </button>
      </form>
      <ErrorBox error={save.error} />
      {trigger.callbackSecret ? <CopyField label="Callback signing secret" value={trigger.callbackSecret} hidden /> : null}
      {graceUntil ? (
        <Notice>
          Callbacks carry a signature by the old secret too until <Time iso={graceUntil} />.
        </Notice>
      ) : null}
      <div className="btn-row">
        <button type="button" className="btn" onClick={() => setConfirmRotate(true)}>
          Regenerate callback secret…
        </button>
        <button
          type="button"
          className="btn"
          disabled={!trigger.callbackUrl || send.busy}
          data-testid="send-test-callback"
          onClick={() => void send.run(async () => setTest(await api.sendTestCallback(trigger.id)))}
        >
          {send.busy ? "Sending…" : "Send a test callback"}
        </button>
      </div>
      <ErrorBox error={send.error} />
      {test ? (
        test.attempts.length > 0 ? (
          <DeliveriesTable deliveries={test.attempts} />
        ) : (
          <p className="muted">The test event {test.webhookId} is queued; no attempt finished yet.</p>
        )
      ) : null}
      <ConfirmDialog
        open={confirmRotate}
        title="Regenerate the callback secret?"
        body={<p>A new secret is issued. For 24 hours callbacks are signed with both, so receivers can switch over; then the old one stops.</p>}
        confirmLabel="Regenerate"
        onClose={() => setConfirmRotate(false)}
        onConfirm={async () => {
          const r = await api.rotateCallbackSecret(trigger.id);
          onChange({ callbackSecret: r.secret });
          setGraceUntil(r.previousSecretExpiresAt);
        }}
      />
    </section>
  );
}
