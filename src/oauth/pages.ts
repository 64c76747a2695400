/**
 * The sign-in, consent and error pages of the authorization server: plain HTML forms (no script),
 * styled with the console's colours and components (web/src/styles.css: `.card`, `.btn`,
 * `.error`). Every value shown is escaped.
 */
const CSS = `:root{--bg:#f6f7f9;--fg:#1b1f24;--muted:#5b6470;--card:#fff;--border:#d6dae0;--accent:#2557d6;--danger:#b3261e;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:15px;line-height:1.45;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}body{margin:0}main{max-width:30rem;margin:3rem auto;padding:0 1rem}
h1{font-size:1.4rem;margin:.2rem 0 .8rem}.brand{color:var(--muted);font-weight:600;margin-bottom:.5rem}
.card{background:var(--card);border:1px solid var(--border);border-radius:8px;padding:1rem 1.1rem;margin-bottom:1rem}
label{font-weight:600;display:inline-block;margin-bottom:.2rem}input{width:100%;font:inherit;padding:.5rem .6rem;border:1px solid var(--border);border-radius:6px}
.btn-row{display:flex;gap:.5rem;margin-top:.9rem}.btn{font:inherit;padding:.45rem .9rem;border:1px solid var(--border);border-radius:6px;background:#fff;color:var(--fg);cursor:pointer;min-height:36px}
.btn.primary{background:var(--accent);color:#fff;border-color:var(--accent)}.btn.danger{color:var(--danger);border-color:#e4aaa5}
.muted{color:var(--muted)}.error{background:#fdecea;border:1px solid #f1b5af;color:#7a1a14;padding:.6rem .8rem;border-radius:6px;margin:.5rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem .8rem;margin:0}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}`;

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Agent Gateway</title><style>${CSS}</style></head>
<body><main><div class="brand">Agent Gateway</div>${body}</main></body></html>`;
}

export interface LoginView {
  action: string;
  clientName: string;
  agentId: string;
  error?: string;
}

export function renderLogin(v: LoginView): string {
  return page(
    "Sign in",
    `<h1>Sign in</h1><div class="card">
<p><strong>${escapeHtml(v.clientName)}</strong> asks to use agent <code>${escapeHtml(v.agentId)}</code>. Sign in with the admin token of the account that owns it.</p>
${v.error ? `<div class="error" role="alert">${escapeHtml(v.error)}</div>` : ""}
<form method="post" action="${escapeHtml(v.action)}" autocomplete="off">
<label for="admin_token">Admin token</label>
<input id="admin_token" name="admin_token" type="password" required autofocus placeholder="adm_…">
<div class="btn-row"><button class="btn primary" type="submit">Sign in</button></div>
</form></div>`,
  );
}

export interface ConsentView {
  confirm: string;
  abort: string;
  clientName: string;
  clientId: string;
  redirectHost: string;
  agentName: string;
  agentId: string;
  accountName: string;
}

export function renderConsent(v: ConsentView): string {
  return page(
    "Allow access",
    `<h1>Allow ${escapeHtml(v.clientName)} to use ${escapeHtml(v.agentName)}?</h1><div class="card">
<dl><dt>Client</dt><dd>${escapeHtml(v.clientName)}</dd><dt>Redirects to</dt><dd>${escapeHtml(v.redirectHost)}</dd>
<dt>Agent</dt><dd>${escapeHtml(v.agentName)} <span class="muted">(${escapeHtml(v.agentId)})</span></dd><dt>Account</dt><dd>${escapeHtml(v.accountName)}</dd></dl>
<p class="muted">It may chat with or run this agent as a key of it would, billed to this account. The connection is listed under the agent's keys; deleting it there revokes it.</p>
<div class="btn-row"><form method="post" action="${escapeHtml(v.confirm)}"><button class="btn primary" type="submit">Allow</button></form>
<form method="post" action="${escapeHtml(v.abort)}"><button class="btn danger" type="submit">Deny</button></form></div>
</div>`,
  );
}

export function renderErrorPage(error: string, description: string): string {
  return page("Sign-in error", `<h1>Sign-in failed</h1><div class="card"><div class="error" role="alert"><strong>${escapeHtml(error)}</strong>${description ? `: ${escapeHtml(description)}` : ""}</div>
<p class="muted">Start again from the application that sent you here.</p></div>`);
}
