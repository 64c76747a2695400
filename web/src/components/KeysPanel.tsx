import { useId, useState, type FormEvent } from "react";
import { api, type Agent, type ApiKey } from "../api";
import { useAction } from "../hooks/useAction";
import { useRemembered } from "../hooks/useRemembered";
import { setRemembered } from "../remembered";
import { ConfirmDialog } from "./ConfirmDialog";
import { CredentialTable } from "./CredentialTable";
import { Dialog } from "./Dialog";
import { Empty } from "./Empty";
import { FormActions } from "./FormActions";
import { controlsOf, emptyControls, KeyControlsFields, type KeyControlsDraft } from "./KeyControlsFields";
import { Time } from "./Time";
import { ShownOnceDialog } from "./ShownOnceDialog";

export function KeysPanel({ agent, reload }: { agent: Agent; reload: () => Promise<void> }) {
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const { busy, error, setError, run } = useAction();
  const [created, setCreated] = useState<{ key: string; apiKey: ApiKey } | null>(null);
  const [remember, setRememberBox] = useState(false);
  const [toDelete, setToDelete] = useState<ApiKey | null>(null);
  const [controls, setControls] = useState<KeyControlsDraft>(emptyControls());
  const [editing, setEditing] = useState<ApiKey | null>(null);
  const remembered = useRemembered(agent.id);
  const uid = useId();

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return setError("Give the key a name, for example “production”.");
    const input = controlsOf(controls);
    if (typeof input === "string") return setError(input);
    await run(async () => {
      const c = await api.createApiKey(agent.id, name.trim(), input);
      setCreating(false);
      setName("");
      setControls(emptyControls());
      setRememberBox(false);
      setCreated(c);
      void reload();
    });
  };
  const saveControls = async (e: FormEvent) => {
    e.preventDefault();
    const input = controlsOf(controls, editing?.expiresAt);
    if (typeof input === "string") return setError(input);
    await run(async () => {
      await api.updateApiKeyControls(editing!.id, input);
      setEditing(null);
      void reload();
    });
  };
  const edit = (k: ApiKey) => {
    setError(undefined);
    setControls({ expiry: "keep", date: "", spendLimit: k.spendLimit ? String(Number(k.spendLimit)) : "", period: k.spendLimitPeriod ?? "MONTH" });
    setEditing(k);
  };
  const limitsOf = (k: ApiKey) => (
    <>
      <div>
        {k.expiresAt ? (
          <>
            {new Date(k.expiresAt).getTime() <= Date.now() ? "expired " : "expires "}
            <Time iso={k.expiresAt} />
          </>
        ) : (
          <span className="muted">never expires</span>
        )}
      </div>
      <div>{k.spendLimit ? `$${Number(k.spent ?? 0).toFixed(4)} of $${Number(k.spendLimit)} / ${k.spendLimitPeriod === "TOTAL" ? "total" : k.spendLimitPeriod === "DAY" ? "day" : "month"}` : <span className="muted">no spend limit</span>}</div>
      <button type="button" className="btn small" onClick={() => edit(k)} aria-label={`Edit limits of key ${k.name}`}>
        Edit
      </button>
    </>
  );
  const closeCreated = () => {
    if (created && remember) setRemembered(agent.id, { key: created.key, name: created.apiKey.name, prefix: created.apiKey.prefix });
    setCreated(null); // the full key is gone from memory now
  };

  return (
    <section className="panel" id="keys" aria-labelledby="keys-h">
      <div className="panel-head">
        <h2 id="keys-h">API keys</h2>
        <button type="button" className="btn primary" onClick={() => (setCreating(true), setControls(emptyControls()), setError(undefined))}>
          Create key
        </button>
      </div>
      <p className="help">
        Keys call this agent on the chat endpoint. A key is shown in full only once, when it is created. OAuth connections (an app you allowed on the sign-in page, e.g.
        ChatGPT or Claude) are listed here too, with the same limits; deleting one revokes its access at once.
      </p>
      {agent.apiKeys.length === 0 ? (
        <Empty>No keys yet. Create one to call this agent from code.</Empty>
      ) : (
        <CredentialTable
          rows={agent.apiKeys.map((k) => ({ ...k, masked: k.kind === "OAUTH" ? `OAuth connection: ${k.clientName ?? k.clientId ?? ""}` : `${k.prefix}…${k.last4}`, limits: limitsOf(k) }))}
          limits="Limits"
          caption={`API keys of ${agent.name}`}
          valueLabel="Key"
          action={{ label: "Delete", aria: (r) => `Delete key ${r.name}` }}
          onAction={(id) => setToDelete(agent.apiKeys.find((k) => k.id === id) ?? null)}
        />
      )}

      <Dialog open={creating} title="Create an API key" onClose={() => setCreating(false)}>
        <form onSubmit={create}>
          <label htmlFor={`${uid}-kname`}>Key name</label>
          <input id={`${uid}-kname`} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. production" maxLength={200} />
          <p className="help">Use one key per environment or client, so you can revoke one without touching the others.</p>
          <KeyControlsFields draft={controls} onChange={setControls} />
          <FormActions error={error} busy={busy} onCancel={() => setCreating(false)} submit="Create key" busyLabel="Creating…" />
        </form>
      </Dialog>

      <Dialog open={!!editing} title={`Limits of key ${editing?.name ?? ""}`} onClose={() => setEditing(null)}>
        <form onSubmit={saveControls}>
          <KeyControlsFields draft={controls} onChange={setControls} canKeep />
          <FormActions error={error} busy={busy} onCancel={() => setEditing(null)} submit="Save limits" busyLabel="Saving…" />
        </form>
      </Dialog>

      <ShownOnceDialog
        title="Your new API key"
        warning={
          <>
            Copy this key now. <strong>You will not see it again</strong>: only a hash is stored. If you lose it, create a new key.
          </>
        }
        label={`Key “${created?.apiKey.name ?? ""}”`}
        value={created?.key ?? null}
        onClose={closeCreated}
      >
        <label className="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRememberBox(e.target.checked)} /> Remember this key in this browser (local storage) to fill in the code
          examples
        </label>
      </ShownOnceDialog>

      <ConfirmDialog
        open={!!toDelete}
        title={`Delete key ${toDelete?.name ?? ""}?`}
        body={
          toDelete?.kind === "OAUTH" ? (
            <p>{toDelete.clientName ?? "The client"} loses access at once: its tokens stop working and it must sign in again. This cannot be undone.</p>
          ) : (
            <p>Anything using this key ({toDelete ? `${toDelete.prefix}…${toDelete.last4}` : ""}) is rejected at once. This cannot be undone.</p>
          )
        }
        confirmLabel="Delete key"
        onClose={() => setToDelete(null)}
        onConfirm={async () => {
          await api.deleteApiKey(toDelete!.id);
          if (remembered && remembered.prefix === toDelete!.prefix) setRemembered(agent.id, null);
          await reload();
        }}
      />
    </section>
  );
}
