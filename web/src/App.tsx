import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { api, clearToken, getToken, onUnauthenticated, setToken, type Account } from "./api";
import { ErrorBox, useAction } from "./ui";
import { AgentPage, AgentsPage, NewAgentPage } from "./agents";
import { TriggerPage, TriggersPage } from "./triggers";
import { ThreadPage } from "./threads";
import { AccountPage } from "./account";

/** Hash routes: #/agents, #/agents/new, #/agents/:id, #/triggers, #/triggers/:id, #/threads/:id */
function useHashRoute(): string[] {
  const parse = () => (location.hash.replace(/^#\/?/, "") || "agents").split("/").filter(Boolean);
  const [parts, setParts] = useState(parse);
  useEffect(() => {
    const on = () => setParts(parse());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return parts;
}

export const go = (path: string) => {
  location.hash = `#/${path.replace(/^\//, "")}`;
};

export function App() {
  const [token, setTok] = useState(getToken);
  const [account, setAccount] = useState<Account>();
  const signOut = useCallback(() => {
    clearToken();
    setTok(null);
    setAccount(undefined);
  }, []);
  useEffect(() => onUnauthenticated(signOut), [signOut]);

  const refreshAccount = useCallback(async () => {
    try {
      setAccount(await api.me());
    } catch {
      /* shown where it matters; 401 signs out */
    }
  }, []);
  useEffect(() => {
    if (!token) return;
    void refreshAccount();
    const t = setInterval(refreshAccount, 15_000);
    return () => clearInterval(t);
  }, [token, refreshAccount]);

  if (!token) return <SignIn onSignedIn={(t, a) => (setTok(t), setAccount(a))} />;
  return <Shell account={account} onSignOut={signOut} refreshAccount={refreshAccount} />;
}

function SignIn({ onSignedIn }: { onSignedIn: (token: string, account: Account) => void }) {
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

function Shell({ account, onSignOut, refreshAccount }: { account?: Account; onSignOut: () => void; refreshAccount: () => Promise<void> }) {
  const parts = useHashRoute();
  const mainRef = useRef<HTMLElement>(null);
  const [section, id] = parts;
  // Move focus to the page on navigation so keyboard and screen-reader users land on the new content.
  useEffect(() => {
    const h1 = mainRef.current?.querySelector("h1");
    if (h1) {
      h1.setAttribute("tabindex", "-1");
      h1.focus({ preventScroll: false });
    }
    window.scrollTo(0, 0);
  }, [parts.join("/")]);

  let page;
  if (section === "agents" && id === "new") page = <NewAgentPage />;
  else if (section === "agents" && id) page = <AgentPage id={id} key={id} />;
  else if (section === "agents") page = <AgentsPage />;
  else if (section === "triggers" && id) page = <TriggerPage id={id} key={id} onRun={refreshAccount} />;
  else if (section === "triggers") page = <TriggersPage />;
  else if (section === "threads" && id) page = <ThreadPage id={id} key={id} />;
  else if (section === "account") page = <AccountPage onSaved={refreshAccount} />;
  else
    page = (
      <section>
        <h1>Not found</h1>
        <p>
          There is no page here. <a href="#/agents">Go to agents</a>.
        </p>
      </section>
    );

  return (
    <div className="shell">
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), mainRef.current?.focus())}>
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href="#/agents">
          Agent Gateway
        </a>
        <nav aria-label="Main">
          <a href="#/agents" aria-current={section === "agents" ? "page" : undefined}>
            Agents
          </a>
          <a href="#/triggers" aria-current={section === "triggers" ? "page" : undefined}>
            Triggers
          </a>
        </nav>
        <div className="account" aria-label="Account">
          <a className="account-name" data-testid="account-name" href="#/account" aria-current={section === "account" ? "page" : undefined} title="Account settings">
            {account?.name ?? "…"}
          </a>
          <span className="balance" data-testid="balance" title="Account balance">
            Balance: {account ? `$${Number(account.balance).toFixed(2)}` : "…"}
          </span>
          <button type="button" className="btn small" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}
