import { useId, useState, type FormEvent } from "react";
import { api, type AdminToken } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { CredentialTable } from "../components/CredentialTable";
import { ErrorBox } from "../components/ErrorBox";
import { ShownOnceDialog } from "../components/ShownOnceDialog";
import { useAction } from "../hooks/useAction";
import { useAsync } from "../hooks/useAsync";

/** The account's admin tokens: create (shown once), see when each was last used, revoke. */
export function AdminTokensPage() {
  const { data, error, loading, reload } = useAsync(() => api.adminTokens(), []);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ token: string; adminToken: AdminToken } | null>(null);
  const [toRevoke, setToRevoke] = useState<AdminToken | null>(null);
  const { busy, error: createError, setError, run } = useAction();
  const uid = useId();
  const create = (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return setError("Give the token a name, for example “deploy script”.");
    return run(async () => {
      setCreated(await api.createAdminToken(name.trim()));
      setName("");
      await reload();
    });
  };
  return (
    <section>
      <h1>Admin tokens</h1>
      <p className="help">Admin tokens sign in to this console and the GraphQL API. Revoking one stops it at once, on every server, including open live connections.</p>
      <form className="inline-form" onSubmit={create}>
        <label htmlFor={`${uid}-name`}>New token name</label>
        <input id={`${uid}-name`} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} placeholder="e.g. deploy script" />
        <button type="submit" className="btn primary" disabled={busy}>
          Create token
        </button>
      </form>
      <ErrorBox error={createError ?? error} />
      {loading && !data ? <p className="muted">Loading…</p> : null}
      {data ? (
        <CredentialTable
          rows={data.map((t) => ({ ...t, masked: `${t.prefix}…` }))}
          caption="Admin tokens of this account"
          valueLabel="Token"
          action={{ label: "Revoke", aria: (r) => `Revoke token ${r.name || r.masked}` }}
          onAction={(id) => setToRevoke(data.find((t) => t.id === id) ?? null)}
          testId="admin-tokens"
        />
      ) : null}
      <ShownOnceDialog
        title="Your new admin token"
        warning={
          <>
            Copy this token now. <strong>You will not see it again</strong>: only a hash is stored.
          </>
        }
        label={`Token “${created?.adminToken.name ?? ""}”`}
        value={created?.token ?? null}
        onClose={() => setCreated(null)}
      />
      <ConfirmDialog
        open={!!toRevoke}
        title={`Revoke ${toRevoke?.name || "this token"}?`}
        body={<p>Anything signed in with {toRevoke ? `${toRevoke.prefix}…` : "it"} is signed out at once. If it is the token you are using now, you are signed out too.</p>}
        confirmLabel="Revoke token"
        onClose={() => setToRevoke(null)}
        onConfirm={async () => {
          await api.revokeAdminToken(toRevoke!.id);
          await reload();
        }}
      />
    </section>
  );
}
