import { useEffect, useId, useState, type FormEvent } from "react";
import { api } from "../api";
import { ErrorBox } from "../components/ErrorBox";
import { useAsync } from "../hooks/useAsync";

/** Account settings: payload retention and the relaxed signature-timestamp rule (spec 5.2 rule 3). */
export function AccountPage({ onSaved }: { onSaved: () => Promise<void> }) {
  const { data, error, loading, setData } = useAsync(() => api.settings(), []);
  const [retention, setRetention] = useState("");
  const [relax, setRelax] = useState(false);
  const [saveError, setSaveError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const uid = useId();
  useEffect(() => {
    if (data) {
      setRetention(String(data.retentionDays));
      setRelax(data.relaxSignatureTimestamp);
    }
  }, [data]);
  if (loading && !data) return <p className="muted">Loading…</p>;
  if (error || !data) return <ErrorBox error={error ?? "Could not load the account."} />;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    const days = Number(retention);
    if (!Number.isInteger(days) || days < 1) return setSaveError("Retention must be a whole number of days, at least 1.");
    setBusy(true);
    setSaveError(undefined);
    try {
      setData(await api.updateSettings({ retentionDays: days, relaxSignatureTimestamp: relax }));
      setSaved(true);
      await onSaved();
    } catch (err) {
      setSaveError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>Account</h1>
      <section className="panel" aria-labelledby="acct-h">
        <h2 id="acct-h">{data.name}</h2>
        <dl className="kv">
          <dt>Account id</dt>
          <dd className="mono">{data.id}</dd>
          <dt>Balance</dt>
          <dd>${data.balance}</dd>
        </dl>
        <p className="help">Chat calls and model calls made by runs draw on the balance. An operator tops it up.</p>
      </section>
      <section className="panel" aria-labelledby="settings-acct-h">
        <h2 id="settings-acct-h">Settings</h2>
        <form onSubmit={submit} className="form" noValidate>
          <div className="field">
            <label htmlFor={`${uid}-ret`}>Payload retention (days)</label>
            <input id={`${uid}-ret`} type="number" min={1} inputMode="numeric" value={retention} onChange={(e) => (setRetention(e.target.value), setSaved(false))} />
            <p className="help">Webhook payloads are kept in each run's audit entry for this many days, then purged.</p>
          </div>
          <label className="check">
            <input type="checkbox" checked={relax} onChange={(e) => (setRelax(e.target.checked), setSaved(false))} /> Accept <code>X-Service-Signature</code> without{" "}
            <code>X-Service-Timestamp</code>
          </label>
          <p className="help">Only for senders that cannot add a timestamp: without it, a captured request can be replayed.</p>
          <ErrorBox error={saveError} />
          <div className="actions">
            <button type="submit" className="btn primary" disabled={busy}>
              Save settings
            </button>
            {saved ? <span role="status">Saved.</span> : null}
          </div>
        </form>
      </section>
    </section>
  );
}
