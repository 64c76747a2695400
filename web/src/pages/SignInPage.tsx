import { useState, type FormEvent } from "react";
import { api, setToken, type Account } from "../api";
import { ErrorBox } from "../components/ErrorBox";
import { useAction } from "../hooks/useAction";

export function SignInPage({ onSignedIn }: { onSignedIn: (token: string, account: Account) => void }) {
  const [value, setValue] = useState("");
  const { busy, error, setError, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const t = value.trim();
    if (!t) return setError("Paste your admin token (it starts with adm_).");
    return run(async () => {
      const account = await api.me(t);
      setToken(t);
      onSignedIn(t, account);
    });
  };
  return (
    <main className="signin">
      <form onSubmit={submit} className="card" aria-labelledby="signin-title">
        <h1 id="signin-title">Agent Gateway</h1>
        <p className="muted">Sign in with your account's admin token. It stays in this browser tab only (session storage) until you sign out.</p>
        <label htmlFor="token">Admin token</label>
        <input id="token" type="password" autoComplete="off" placeholder="adm_…" value={value} onChange={(e) => setValue(e.target.value)} autoFocus aria-describedby="token-help" />
        <p id="token-help" className="help">
          An operator creates one with <code>npm run admin -- create-account --name NAME</code>.
        </p>
        <ErrorBox error={error} />
        <button className="btn primary" type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
