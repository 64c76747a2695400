import { useId, useState, type FormEvent } from "react";
import { api, type Trigger } from "../api";
import { ConfirmDialog } from "./ConfirmDialog";
import { CopyButton } from "./CopyButton";
import { Dialog } from "./Dialog";
import { ErrorBox } from "./ErrorBox";
import { FormActions } from "./FormActions";
import { Notice } from "./Notice";
import { Time } from "./Time";

export function SecretPanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const [revealed, setRevealed] = useState(false);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [confirmRevoke, setConfirmRevoke] = useState(false);
  const [revoked, setRevoked] = useState(false);
  const [custom, setCustom] = useState(false);
  const [customValue, setCustomValue] = useState("");
  const [customError, setCustomError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [graceUntil, setGraceUntil] = useState<string | null>(null);
  const [requiredError, setRequiredError] = useState<string>();
  const uid = useId();
  const secret = trigger.secret ?? "";

  const saveCustom = async (e: FormEvent) => {
    e.preventDefault();
    const v = customValue;
    if (v.length < 24 || v.length > 256) return setCustomError(`A secret must be 24 to 256 characters (this one has ${v.length}).`);
    if (!/^[\x20-\x7e]+$/.test(v) || v !== v.trim()) return setCustomError("Use printable ASCII characters only, with no space at the start or end.");
    setBusy(true);
    setCustomError(undefined);
    try {
      const t = await api.setTriggerSecret(trigger.id, v);
      onChange({ secret: t.secret });
      setRevoked(false);
      setGraceUntil(new Date(Date.now() + 24 * 3600_000).toISOString());
      setCustom(false);
      setCustomValue("");
    } catch (err) {
      setCustomError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel" aria-labelledby="secret-h">
      <h2 id="secret-h">Secret</h2>
      <p className="help">
        Send it as <code>x-trigger-secret</code>, or sign the body with it (HMAC-SHA256 in <code>X-Service-Signature</code>, or Standard Webhooks headers).
      </p>
      <div className="copy-field">
        <div className="copy-field-head">
          <label htmlFor={`${uid}-s`}>Current secret</label>
          <span className="btn-row">
            <button type="button" className="btn small" onClick={() => setRevealed((r) => !r)} aria-pressed={revealed}>
              {revealed ? "Hide" : "Reveal"}
            </button>
            <CopyButton text={secret} what="secret" />
          </span>
        </div>
        <input id={`${uid}-s`} className="mono" readOnly type={revealed ? "text" : "password"} value={secret} data-testid="secret" />
      </div>
      {revoked ? (
        <Notice>
          <span data-testid="revoked-notice">Every previous secret was revoked: only the current secret works now.</span>
        </Notice>
      ) : null}
      {graceUntil ? (
        <Notice>
          <span data-testid="grace-notice">
            The old secret keeps working for 24 hours, until <Time iso={graceUntil} />. Update the systems that call this webhook before then.
          </span>
        </Notice>
      ) : null}
      <label className="check">
        <input
          type="checkbox"
          checked={trigger.secretRequired}
          disabled={busy}
          onChange={async (e) => {
            const required = e.target.checked;
            setBusy(true);
            setRequiredError(undefined);
            onChange({ secretRequired: required }); // optimistic; reverted if the server refuses
            try {
              const t = await api.setSecretRequired(trigger.id, required);
              onChange({ secretRequired: t.secretRequired });
            } catch (err) {
              onChange({ secretRequired: !required });
              setRequiredError((err as Error).message);
            } finally {
              setBusy(false);
            }
          }}
        />{" "}
        Require the secret or a signature on every webhook (recommended)
      </label>
      {!trigger.secretRequired ? (
        <p className="warning" role="status">
          Anyone who knows the webhook URL can start runs of this agent.
        </p>
      ) : null}
      <ErrorBox error={requiredError} />
      <div className="btn-row">
        <button type="button" className="btn" onClick={() => setConfirmRotate(true)}>
          Regenerate secret…
        </button>
        <button type="button" className="btn" onClick={() => (setCustom(true), setCustomError(undefined))}>
          Set a custom secret…
        </button>
        <button type="button" className="btn" onClick={() => setConfirmRevoke(true)}>
          Revoke previous secrets now…
        </button>
      </div>
      <ConfirmDialog
        open={confirmRevoke}
        title="Revoke the previous secrets now?"
        body={
          <p>
            Secrets replaced in the last 24 hours stop working <strong>at once</strong>, instead of at the end of their grace period. Only the current secret keeps working. Use this
            when an old secret leaked.
          </p>
        }
        confirmLabel="Revoke now"
        onClose={() => setConfirmRevoke(false)}
        onConfirm={async () => {
          await api.revokePreviousTriggerSecrets(trigger.id);
          setGraceUntil(null);
          setRevoked(true);
        }}
      />
      <ConfirmDialog
        open={confirmRotate}
        title="Regenerate the secret?"
        body={
          <p>
            A new secret is issued. The old secret keeps working for <strong>24 hours</strong> (until {new Date(Date.now() + 24 * 3600_000).toLocaleString()}), then stops: update
            the calling systems before then.
          </p>
        }
        confirmLabel="Regenerate"
        onClose={() => setConfirmRotate(false)}
        onConfirm={async () => {
          const r = await api.rotateTriggerSecret(trigger.id);
          onChange({ secret: r.secret });
          setRevoked(false);
          setGraceUntil(r.previousSecretExpiresAt);
        }}
      />
      <Dialog open={custom} title="Set a custom secret" onClose={() => setCustom(false)}>
        <form onSubmit={saveCustom}>
          <label htmlFor={`${uid}-c`}>New secret</label>
          <input id={`${uid}-c`} className="mono" value={customValue} onChange={(e) => setCustomValue(e.target.value)} autoComplete="off" aria-describedby={`${uid}-c-help`} />
          <p className="help" id={`${uid}-c-help`}>
            24 to 256 printable characters. The old secret keeps working for 24 hours, then stops.
          </p>
          <FormActions error={customError} busy={busy} onCancel={() => setCustom(false)} submit="Save secret" />
        </form>
      </Dialog>
    </section>
  );
}
