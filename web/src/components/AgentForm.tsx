import { useEffect, useId, useState, type FormEvent } from "react";
import { api, DEFAULT_MODEL, MODELS, type Agent } from "../api";
import { CodeEditor } from "./CodeEditor";
import { ErrorBox } from "./ErrorBox";
import { exampleScript } from "../example-script";

interface FormState {
  name: string;
  instructions: string;
  defaultModel: string;
  allModels: boolean;
  allowedModels: string[];
  fallbackModels: string[];
  script: string;
}

const toForm = (a?: Agent): FormState => ({
  name: a?.name ?? "",
  instructions: a?.instructions ?? "",
  defaultModel: a?.defaultModel ?? DEFAULT_MODEL,
  allModels: !a?.allowedModels,
  allowedModels: a?.allowedModels ?? [...MODELS],
  fallbackModels: a?.fallbackModels ?? [],
  script: a?.script ?? "",
});

export function AgentForm({ agent, onSaved, submitLabel }: { agent?: Agent; onSaved: (a: Agent) => void; submitLabel: string }) {
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
      fallbackModels: f.fallbackModels,
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
      <fieldset className="field">
        <legend>Fallback models</legend>
        <p className="help">Tried in this order when the chosen model&apos;s provider fails (errors, timeouts, overload) before answering.</p>
        {f.fallbackModels.length > 0 ? (
          <ol>
            {f.fallbackModels.map((m) => (
              <li key={m}>
                <span className="mono">{m}</span>{" "}
                <button type="button" className="btn small" aria-label={`Remove fallback ${m}`} onClick={() => set({ fallbackModels: f.fallbackModels.filter((x) => x !== m) })}>
                  Remove
                </button>
              </li>
            ))}
          </ol>
        ) : null}
        <select
          aria-label="Add a fallback model"
          value=""
          aria-invalid={error?.param === "fallbackModels" || undefined}
          onChange={(e) => e.target.value && set({ fallbackModels: [...f.fallbackModels, e.target.value] })}
        >
          <option value="">Add a fallback model…</option>
          {MODELS.filter((m) => !f.fallbackModels.includes(m) && (f.allModels || f.allowedModels.includes(m))).map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        {fieldError("fallbackModels")}
      </fieldset>
      <div className="field">
        <div className="label-row">
          <label htmlFor={`${uid}-script`}>Script (optional)</label>
          {!f.script.trim() ? (
            <button type="button" className="btn small" onClick={() => set({ script: exampleScript(DEFAULT_MODEL) })}>
              Insert example script
            </button>
          ) : null}
          <label className="btn small" htmlFor={`${uid}-script-file`}>
            Import file…
          </label>
          {/* A module file from disk replaces the editor's text; saving validates it (errors name line and column). */}
          <input
            id={`${uid}-script-file`}
            type="file"
            accept=".js,.mjs,text/javascript"
            className="sr-only"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.value = "";
              if (file) void file.text().then((text) => set({ script: text }));
            }}
          />
        </div>
        <p className="help" id={`${uid}-script-help`}>
          JavaScript run in a sandbox for each webhook: <code>export default async function run(input, ctx)</code>. <code>input</code> is the webhook payload,{" "}
          <code>ctx.chat({"{ model, messages }"})</code> calls a model, <code>ctx.fetch(url, init)</code> calls an allowlisted HTTPS API, <code>ctx.secrets.NAME</code>{" "}
          reads a secret, <code>ctx.step(name, fn)</code> runs once per job, <code>ctx.log(…)</code> writes to the run's log, and the returned JSON is the job's result.
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
      {error && !["name", "instructions", "defaultModel", "allowedModels", "fallbackModels", "script"].includes(error.param ?? "") ? <ErrorBox error={error.message} /> : null}
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
