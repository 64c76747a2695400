import { useEffect, useRef, type ReactNode } from "react";
import type { Account } from "../api";

/** The signed-in frame: top bar with navigation, account name, balance, sign-out; the page below. */
export function Shell({ section, routeKey, account, onSignOut, children }: { section?: string; routeKey: string; account?: Account; onSignOut: () => void; children: ReactNode }) {
  const mainRef = useRef<HTMLElement>(null);
  // Move focus to the page on navigation so keyboard and screen-reader users land on the new content.
  useEffect(() => {
    const h1 = mainRef.current?.querySelector("h1");
    if (h1) {
      h1.setAttribute("tabindex", "-1");
      h1.focus({ preventScroll: false });
    }
    window.scrollTo(0, 0);
  }, [routeKey]);
  const navLink = (href: string, name: string, label: string) => (
    <a href={href} aria-current={section === name ? "page" : undefined}>
      {label}
    </a>
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
          {navLink("#/agents", "agents", "Agents")}
          {navLink("#/triggers", "triggers", "Triggers")}
          {navLink("#/jobs", "jobs", "Jobs")}
          {navLink("#/usage", "usage", "Usage")}
          {navLink("#/tokens", "tokens", "Admin tokens")}
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
        {children}
      </main>
    </div>
  );
}
