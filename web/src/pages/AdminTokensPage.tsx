import { useId, useState, type FormEvent } from "react";
import { api, type AdminToken } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { CopyField } from "../components/CopyField";
import { Dialog } from "../components/Dialog";
import { ErrorBox } from "../components/ErrorBox";
import { Time } from "../components/Time";
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
        <div className="table-wrap">
          <table data-testid="admin-tokens">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Token</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.map((t) => (
                <tr key={t.id}>
                  <td data-label="Name">{t.name || <span className="muted">unnamed</span>}</td>
                  <td data-label="Token" className="mono">
                    {t.prefix}…
                  </td>
                  <td data-label="Last used">{t.lastUsedAt ? <Time iso={t.lastUsedAt} /> : <span className="muted">never</span>}</td>
                  <td data-label="Created">
                    <Time iso={t.createdAt} />
                  </td>
                  <td>
                    <button type="button" className="btn small danger" onClick={() => setToRevoke(t)} aria-label={`Revoke token ${t.name || t.prefix}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Dialog open={!!created} title="Your new admin token" onClose={() => setCreated(null)} wide>
        {created ? (
          <div>
            <p className="warning" role="alert">
              Copy this token now. <strong>You will not see it again</strong>: only a hash is stored.
            </p>
            <CopyField label={`Token “${created.adminToken.name}”`} value={created.token} />
            <div className="actions">
              <button type="button" className="btn primary" onClick={() => setCreated(null)} data-autofocus>
                I have copied it
              </button>
            </div>
          </div>
        ) : null}
      </Dialog>
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
