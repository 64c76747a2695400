import { useEffect, useId, useState, type FormEvent } from "react";
import { api, DEFAULT_MODEL, MODELS, type Agent, type ApiKey } from "./api";
import { go } from "./App";
import { CodeEditor, ConfirmDialog, CopyButton, CopyField, Dialog, Empty, ErrorBox, Notice, Time, useAction, useAsync } from "./ui";
import { TriggerList, CreateTriggerButton } from "./triggers";

// ---- remembered keys (local storage, per agent; a client-side convenience, spec 2.2 rule 5) ----

interface Remembered {
  key: string;
  name: string;
  prefix: string;
}
const rememberKey = (agentId: string) => `agw.rememberedKey.${agentId}`;
export function getRemembered(agentId: string): Remembered | null {
  try {
    return JSON.parse(localStorage.getItem(rememberKey(agentId)) ?? "null");
  } catch {
    return null;
  }
}
function setRemembered(agentId: string, r: Remembered | null) {
  if (r) localStorage.setItem(rememberKey(agentId), JSON.stringify(r));
  else localStorage.removeItem(rememberKey(agentId));
  window.dispatchEvent(new Event("agw-remembered"));
}
function useRemembered(agentId: string): Remembered | null {
  const [r, setR] = useState(() => getRemembered(agentId));
  useEffect(() => {
    const on = () => setR(getRemembered(agentId));
    window.addEventListener("agw-remembered", on);
    window.addEventListener("storage", on);
    return () => {
      window.removeEventListener("agw-remembered", on);
      window.removeEventListener("storage", on);
    };
  }, [agentId]);
  return r;
}

// ---- list ----

export function AgentsPage() {
  const { data, error, loading } = useAsync(() => api.agents(), []);
  return (
    <section>
      <div className="page-head">
        <h1>Agents</h1>
        <a className="btn primary" href="#/agents/new">
          New agent
        </a>
      </div>
      <ErrorBox error={error} />
      {loading && !data ? <p className="muted">Loading…</p> : null}
      {data && data.length === 0 ? (
        <Empty>
          <p>No agents yet.</p>
          <p>
            An agent answers on the OpenAI-compatible chat endpoint with its own keys; give it a script and it can also run from webhooks.{" "}
            <a href="#/agents/new">Create your first agent</a>.
          </p>
        </Empty>
      ) : null}
      {data && data.length > 0 ? (
        <ul className="cards" aria-label="Agents">
          {data.map((a) => (
            <li key={a.id} className="card agent-card">
              <h2>
                <a href={`#/agents/${a.id}`}>{a.name}</a>
              </h2>
              <p className="meta">
                <span className="badge">{a.kind === "AUTOMATION" ? "automation (script)" : "chat"}</span> <span className="mono">{a.defaultModel}</span>
              </p>
              <p className="meta">
                {a.apiKeys.length} key{a.apiKeys.length === 1 ? "" : "s"} · {a.triggers.length} trigger{a.triggers.length === 1 ? "" : "s"}
              </p>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

// ---- create / edit form ----

const SCRIPT_TEMPLATE = `export default async function run(input, ctx) {
  ctx.log("received", input);
  // const reply = await ctx.chat({ model: "${DEFAULT_MODEL}", messages: [{ role: "user", content: JSON.stringify(input) }] });
  return { ok: true, received: input };
}
`;

interface FormState {
  name: string;
  instructions: string;
  defaultModel: string;
  allModels: boolean;
  allowedModels: string[];
  script: string;
}

const toForm = (a?: Agent): FormState => ({
  name: a?.name ?? "",
  instructions: a?.instructions ?? "",
  defaultModel: a?.defaultModel ?? DEFAULT_MODEL,
  allModels: !a?.allowedModels,
  allowedModels: a?.allowedModels ?? [...MODELS],
  script: a?.script ?? "",
});

function AgentForm({ agent, onSaved, submitLabel }: { agent?: Agent; onSaved: (a: Agent) => void; submitLabel: string }) {
  const [f, setF] = useState<FormState>(() => toForm(agent));
  const [error, setError] = useState<{ message: string; param?: string } | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const uid = useId();
  useEffect(() => setF(toForm(agent)), [agent?.updatedAt]);
  const set = (patch: Partial<FormState>) => {
    setF((s) => ({ ...s, ...patch }));
    setSaved(false);
  };
  const scriptErrorLine = error?.param === "script" ? Number(/line (\d+)/i.exec(error.message)?.[1]) || null : null;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (!f.name.trim()) return setError({ message: "Give the agent a name.", param: "name" });
    if (!f.allModels && f.allowedModels.length === 0) return setError({ message: "Allow at least one model, or tick “All supported models”.", param: "allowedModels" });
    if (!f.allModels && !f.allowedModels.includes(f.defaultModel))
      return setError({ message: "The default model must be one of the allowed models.", param: "defaultModel" });
    const input = {
      name: f.name.trim(),
      instructions: f.instructions,
      defaultModel: f.defaultModel,
      allowedModels: f.allModels ? null : f.allowedModels,
      script: f.script.trim() ? f.script : agent ? null : undefined,
    };
    setBusy(true);
    try {
      const a = agent ? await api.updateAgent(agent.id, input) : await api.createAgent(input);
      setSaved(true);
      onSaved(a);
    } catch (err) {
      const e2 = err as Error & { param?: string };
      setError({ message: e2.message, param: e2.param });
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (p: string) =>
    error?.param === p ? (
      <p className="field-error" id={`${uid}-${p}-err`}>
        {error.message}
      </p>
    ) : null;

  return (
    <form onSubmit={submit} className="form" noValidate>
      <div className="field">
        <label htmlFor={`${uid}-name`}>Name</label>
        <input
          id={`${uid}-name`}
          value={f.name}
          maxLength={200}
          required
          onChange={(e) => set({ name: e.target.value })}
          aria-invalid={error?.param === "name" || undefined}
          aria-describedby={error?.param === "name" ? `${uid}-name-err` : undefined}
        />
        {fieldError("name")}
      </div>
      <div className="field">
        <label htmlFor={`${uid}-instr`}>Instructions</label>
        <textarea id={`${uid}-instr`} rows={3} value={f.instructions} onChange={(e) => set({ instructions: e.target.value })} aria-describedby={`${uid}-instr-help`} />
        <p className="help" id={`${uid}-instr-help`}>
          The system prompt sent first in every thread.
        </p>
        {fieldError("instructions")}
      </div>
      <div className="field">
        <label htmlFor={`${uid}-model`}>Default model</label>
        <select id={`${uid}-model`} value={f.defaultModel} onChange={(e) => set({ defaultModel: e.target.value })} aria-invalid={error?.param === "defaultModel" || undefined}>
          {MODELS.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        {fieldError("defaultModel")}
      </div>
      <fieldset className="field">
        <legend>Allowed models</legend>
        <label className="check">
          <input type="checkbox" checked={f.allModels} onChange={(e) => set({ allModels: e.target.checked })} /> All supported models
        </label>
        {!f.allModels ? (
          <div className="model-grid">
            {MODELS.map((m) => (
              <label className="check" key={m}>
                <input
                  type="checkbox"
                  checked={f.allowedModels.includes(m)}
                  onChange={(e) => set({ allowedModels: e.target.checked ? [...f.allowedModels, m] : f.allowedModels.filter((x) => x !== m) })}
                />{" "}
                <span className="mono">{m}</span>
              </label>
            ))}
          </div>
        ) : null}
        {fieldError("allowedModels")}
      </fieldset>
      <div className="field">
        <div className="label-row">
          <label htmlFor={`${uid}-script`}>Script (optional)</label>
          {!f.script.trim() ? (
            <button type="button" className="btn small" onClick={() => set({ script: SCRIPT_TEMPLATE })}>
              Insert example script
            </button>
          ) : null}
        </div>
        <p className="help" id={`${uid}-script-help`}>
          JavaScript run in a sandbox for each webhook: <code>export default async function run(input, ctx)</code>. <code>input</code> is the webhook payload,{" "}
          <code>ctx.chat({"{ model, messages }"})</code> calls a model, <code>ctx.log(…)</code> writes to the run's log, and the returned JSON is the job's result.
          Without a script the agent answers the payload as a chat message.
        </p>
        <CodeEditor
          id={`${uid}-script`}
          value={f.script}
          onChange={(v) => set({ script: v })}
          errorLine={scriptErrorLine}
          invalid={error?.param === "script"}
          describedBy={`${uid}-script-help${error?.param === "script" ? ` ${uid}-script-err` : ""}`}
          placeholder="export default async function run(input, ctx) { … }"
        />
        {error?.param === "script" ? (
          <p className="field-error" id={`${uid}-script-err`} role="alert">
            {scriptErrorLine ? `Line ${scriptErrorLine}: ` : ""}
            {error.message}
          </p>
        ) : null}
      </div>
      {error && !["name", "instructions", "defaultModel", "allowedModels", "script"].includes(error.param ?? "") ? <ErrorBox error={error.message} /> : null}
      {error && error.param && error.param !== "script" ? (
        <p className="sr-only" role="alert">
          {error.message}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="btn primary" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </button>
        {saved && agent ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}

export function NewAgentPage() {
  return (
    <section>
      <p className="crumbs">
        <a href="#/agents">Agents</a> /
      </p>
      <h1>New agent</h1>
      <AgentForm submitLabel="Create agent" onSaved={(a) => go(`agents/${a.id}`)} />
    </section>
  );
}

// ---- one agent ----

export function AgentPage({ id }: { id: string }) {
  const { data: agent, error, loading, reload, setData } = useAsync(() => api.agent(id), [id]);
  const [confirmDelete, setConfirmDelete] = useState(false);
  if (loading && !agent) return <p className="muted">Loading…</p>;
  if (error) return <ErrorBox error={error} />;
  if (!agent)
    return (
      <section>
        <h1>Agent not found</h1>
        <p>
          It may have been deleted. <a href="#/agents">Back to agents</a>
        </p>
      </section>
    );
  return (
    <section>
      <p className="crumbs">
        <a href="#/agents">Agents</a> /
      </p>
      <div className="page-head">
        <h1>{agent.name}</h1>
        <span className="badge">{agent.kind === "AUTOMATION" ? "automation (script)" : "chat"}</span>
      </div>
      <nav className="toc" aria-label="On this page">
        <a href="#keys" onClick={jump("keys")}>
          API keys
        </a>
        <a href="#examples" onClick={jump("examples")}>
          Code examples
        </a>
        <a href="#agent-triggers" onClick={jump("agent-triggers")}>
          Triggers
        </a>
        <a href="#settings" onClick={jump("settings")}>
          Settings
        </a>
      </nav>

      <KeysPanel agent={agent} reload={reload} />
      <ExamplesPanel agent={agent} />

      <section className="panel" id="agent-triggers" aria-labelledby="agent-triggers-h">
        <div className="panel-head">
          <h2 id="agent-triggers-h">Triggers</h2>
          <CreateTriggerButton agentId={agent.id} />
        </div>
        {!agent.script ? (
          <p className="help">This agent has no script: a webhook's payload is sent to its model as a user message and the answer is the job's result.</p>
        ) : null}
        <TriggerList triggers={agent.triggers} showAgent={false} empty="No triggers for this agent yet. Create one to get a webhook URL and a secret." />
      </section>


      <section className="panel" id="settings" aria-labelledby="settings-h">
        <h2 id="settings-h">Settings</h2>
        <AgentForm agent={agent} submitLabel="Save changes" onSaved={(a) => setData(a)} />
      </section>

      <section className="panel danger-zone" aria-labelledby="danger-h">
        <h2 id="danger-h">Delete agent</h2>
        <p>Deleting the agent also deletes its keys (they stop working at once), threads and triggers.</p>
        <button type="button" className="btn danger" onClick={() => setConfirmDelete(true)}>
          Delete agent…
        </button>
      </section>
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${agent.name}?`}
        body={<p>Its {agent.apiKeys.length} key(s) stop working at once and its threads and {agent.triggers.length} trigger(s) are deleted. This cannot be undone.</p>}
        confirmLabel="Delete agent"
        onClose={() => setConfirmDelete(false)}
        onConfirm={async () => {
          await api.deleteAgent(agent.id);
          setRemembered(agent.id, null);
          go("agents");
        }}
      />
    </section>
  );
}

const jump = (id: string) => (e: React.MouseEvent) => {
  e.preventDefault();
  const el = document.getElementById(id);
  el?.scrollIntoView({ behavior: "smooth", block: "start" });
  el?.querySelector<HTMLElement>("h2")?.setAttribute("tabindex", "-1");
  el?.querySelector<HTMLElement>("h2")?.focus({ preventScroll: true });
};

// ---- keys ----

function KeysPanel({ agent, reload }: { agent: Agent; reload: () => Promise<void> }) {
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
        <div className="table-wrap">
          <table>
            <caption className="sr-only">API keys of {agent.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {agent.apiKeys.map((k) => (
                <tr key={k.id}>
                  <td data-label="Name">{k.name}</td>
                  <td data-label="Key" className="mono">
                    {k.prefix}…{k.last4}
                  </td>
                  <td data-label="Last used">{k.lastUsedAt ? <Time iso={k.lastUsedAt} /> : <span className="muted">never</span>}</td>
                  <td data-label="Created">
                    <Time iso={k.createdAt} />
                  </td>
                  <td>
                    <button type="button" className="btn small danger" onClick={() => setToDelete(k)} aria-label={`Delete key ${k.name}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <Dialog open={creating} title="Create an API key" onClose={() => setCreating(false)}>
        <form onSubmit={create}>
          <label htmlFor={`${uid}-kname`}>Key name</label>
          <input id={`${uid}-kname`} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. production" maxLength={200} />
          <p className="help">Use one key per environment or client, so you can revoke one without touching the others.</p>
          <ErrorBox error={error} />
          <div className="actions">
            <button type="button" className="btn" onClick={() => setCreating(false)}>
              Cancel
            </button>
            <button type="submit" className="btn primary" disabled={busy}>
              {busy ? "Creating…" : "Create key"}
            </button>
          </div>
        </form>
      </Dialog>

      <Dialog open={!!created} title="Your new API key" onClose={closeCreated} wide>
        {created ? (
          <div className="new-key">
            <p className="warning" role="alert">
              Copy this key now. <strong>You will not see it again</strong>: only a hash is stored. If you lose it, create a new key.
            </p>
            <CopyField label={`Key “${created.apiKey.name}”`} value={created.key} />
            <label className="check">
              <input type="checkbox" checked={remember} onChange={(e) => setRememberBox(e.target.checked)} /> Remember this key in this browser (local storage) to fill in the code
              examples
            </label>
            <div className="actions">
              <button type="button" className="btn primary" onClick={closeCreated} data-autofocus>
                I have copied it
              </button>
            </div>
          </div>
        ) : null}
      </Dialog>

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

// ---- code examples ----

function ExamplesPanel({ agent }: { agent: Agent }) {
  const remembered = useRemembered(agent.id);
  const base = `${window.location.origin}/api/v1`;
  const key = remembered?.key ?? "a2a_YOUR_KEY";
  const model = agent.defaultModel;
  const [tab, setTab] = useState<"curl" | "python" | "node">("curl");
  const examples = {
    curl: `curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": "${model}",
    "messages": [{"role": "user", "content": "Hello!"}]
  }'

# Continue the conversation: send back the "thread_id" from the response
curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "thread_id": "THREAD_ID", "messages": [{"role": "user", "content": "And then?"}]}'`,
    python: `# pip install openai
from openai import OpenAI

client = OpenAI(base_url="${base}", api_key="${key}")

first = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello!"}],
)
print(first.choices[0].message.content)
thread_id = first.model_extra["thread_id"]

# Continue the same thread
second = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "And then?"}],
    extra_body={"thread_id": thread_id},
)
print(second.choices[0].message.content)`,
    node: `// npm install openai
import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${base}", apiKey: "${key}" });

const first = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello!" }],
});
console.log(first.choices[0].message.content);
const threadId = first.thread_id;

// Continue the same thread (thread_id is a top-level body field)
const second = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "And then?" }],
  // @ts-expect-error thread_id is an Agent Gateway extension
  thread_id: threadId,
});
console.log(second.choices[0].message.content);`,
  };
  const labels = { curl: "curl", python: "Python (openai)", node: "Node.js (openai)" } as const;
  return (
    <section className="panel" id="examples" aria-labelledby="examples-h">
      <h2 id="examples-h">Code examples</h2>
      <p className="help">
        Base URL <code>{base}</code>, model <code>{model}</code>
        {agent.allowedModels ? <> (allowed: {agent.allowedModels.join(", ")})</> : null}.
      </p>
      {remembered ? (
        <Notice>
          Using the key “{remembered.name}” ({remembered.prefix}…) remembered in this browser.{" "}
          <button type="button" className="btn small" onClick={() => setRemembered(agent.id, null)}>
            Forget this key
          </button>
        </Notice>
      ) : (
        <p className="help">
          The examples show a placeholder, <code>a2a_YOUR_KEY</code>. Create a key and tick “remember this key in this browser” to fill it in.
        </p>
      )}
      <div role="tablist" aria-label="Language" className="tabs">
        {(Object.keys(examples) as (keyof typeof examples)[]).map((k) => (
          <button
            key={k}
            role="tab"
            type="button"
            id={`tab-${k}`}
            aria-selected={tab === k}
            aria-controls={`panel-${k}`}
            tabIndex={tab === k ? 0 : -1}
            onClick={() => setTab(k)}
            onKeyDown={(e) => {
              const order = Object.keys(examples) as (keyof typeof examples)[];
              const i = order.indexOf(k);
              const next = e.key === "ArrowRight" ? order[(i + 1) % 3] : e.key === "ArrowLeft" ? order[(i + 2) % 3] : undefined;
              if (next) {
                setTab(next);
                document.getElementById(`tab-${next}`)?.focus();
              }
            }}
          >
            {labels[k]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="example">
        <div className="example-head">
          <CopyButton text={examples[tab]} what={`${labels[tab]} example`} />
        </div>
        <pre className="code" data-testid={`example-${tab}`} tabIndex={0}>
          {examples[tab]}
        </pre>
      </div>
    </section>
  );
}
