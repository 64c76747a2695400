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
import { ShownOnceDialog } from "./ShownOnceDialog";

export function KeysPanel({ agent, reload }: { agent: Agent; reload: () => Promise<void> }) {
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const { busy, error, setError, run } = useAction();
  const [created, setCreated] = useState<{ key: string; apiKey: ApiKey } | null>(null);
  const [remember, setRememberBox] = useState(false);
  const [toDelete, setToDelete] = useState<ApiKey | null>(null);
  const remembered = useRemembered(agent.id);
  const uid = useId();

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return setError("Give the key a name, for example “production”.");
    await run(async () => {
      const c = await api.createApiKey(agent.id, name.trim());
      setCreating(false);
      setName("");
      setRememberBox(false);
      setCreated(c);
      void reload();
    });
  };
  const closeCreated = () => {
    if (created && remember) setRemembered(agent.id, { key: created.key, name: created.apiKey.name, prefix: created.apiKey.prefix });
    setCreated(null); // the full key is gone from memory now
  };

  return (
    <section className="panel" id="keys" aria-labelledby="keys-h">
      <div className="panel-head">
        <h2 id="keys-h">API keys</h2>
        <button type="button" className="btn primary" onClick={() => (setCreating(true), setError(undefined))}>
          Create key
        </button>
      </div>
      <p className="help">Keys call this agent on the chat endpoint. A key is shown in full only once, when it is created.</p>
      {agent.apiKeys.length === 0 ? (
        <Empty>No keys yet. Create one to call this agent from code.</Empty>
      ) : (
        <CredentialTable
          rows={agent.apiKeys.map((k) => ({ ...k, masked: `${k.prefix}…${k.last4}` }))}
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
          <FormActions error={error} busy={busy} onCancel={() => setCreating(false)} submit="Create key" busyLabel="Creating…" />
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
        body={<p>Anything using this key ({toDelete ? `${toDelete.prefix}…${toDelete.last4}` : ""}) is rejected at once. This cannot be undone.</p>}
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
