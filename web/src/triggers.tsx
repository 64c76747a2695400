import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { api, followJob, isSocketUp, MAX_PAYLOAD_BYTES, onSocketState, subscribeJobs, type Job, type LogEntry, type Trigger, type TriggerSummary } from "./api";
import { go } from "./App";
import { CodeEditor, ConfirmDialog, CopyButton, CopyField, Dialog, duration, Empty, ErrorBox, Notice, StatusBadge, Time, useAction, useAsync } from "./ui";

export function InactiveBadge({ active }: { active: boolean }) {
  return active ? null : <span className="badge inactive">inactive</span>;
}

// ---- lists ----

export function TriggersPage() {
  const { data, error, loading } = useAsync(() => api.triggers(), []);
  const agents = useAsync(() => api.agents(), []);
  const [agentId, setAgentId] = useState("");
  const uid = useId();
  return (
    <section>
      <div className="page-head">
        <h1>Triggers</h1>
      </div>
      <p className="help">Every webhook of every agent. A trigger starts a run of its agent for each JSON POST to its URL.</p>
      {agents.data && agents.data.length > 0 ? (
        <div className="inline-form">
          <label htmlFor={`${uid}-agent`}>New trigger for</label>
          <select id={`${uid}-agent`} value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">Choose an agent…</option>
            {agents.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
          <CreateTriggerButton agentId={agentId} disabled={!agentId} />
        </div>
      ) : null}
      <ErrorBox error={error} />
      {loading && !data ? <p className="muted">Loading…</p> : null}
      {data ? (
        <TriggerList
          triggers={data}
          showAgent
          empty={
            agents.data?.length === 0 ? (
              <>
                No triggers yet, and no agents. <a href="#/agents/new">Create an agent</a> first.
              </>
            ) : (
              "No triggers yet. Choose an agent above and create one."
            )
          }
        />
      ) : null}
    </section>
  );
}

export function TriggerList({ triggers, showAgent, empty }: { triggers: TriggerSummary[]; showAgent: boolean; empty: React.ReactNode }) {
  if (triggers.length === 0) return <Empty>{empty}</Empty>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Trigger</th>
            {showAgent ? <th scope="col">Agent</th> : null}
            <th scope="col">State</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {triggers.map((t) => (
            <tr key={t.id}>
              <td data-label="Trigger">
                <a href={`#/triggers/${t.id}`}>{t.description || <span className="mono">{t.id}</span>}</a>
              </td>
              {showAgent ? <td data-label="Agent">{t.agent ? <a href={`#/agents/${t.agent.id}`}>{t.agent.name}</a> : "—"}</td> : null}
              <td data-label="State">{t.active ? <span className="badge active">active</span> : <InactiveBadge active={false} />}</td>
              <td data-label="Created">
                <Time iso={t.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// ---- create ----

export function CreateTriggerButton({ agentId, disabled }: { agentId: string; disabled?: boolean }) {
  const [open, setOpen] = useState(false);
  const [description, setDescription] = useState("");
  const { busy, error, setError, run } = useAction();
  const [created, setCreated] = useState<Awaited<ReturnType<typeof api.createTrigger>> | null>(null);
  const uid = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      const c = await api.createTrigger(agentId, description.trim() || null);
      setOpen(false);
      setDescription("");
      setCreated(c);
    });
  };
  return (
    <>
      <button type="button" className="btn primary" disabled={disabled} onClick={() => (setOpen(true), setError(undefined))}>
        Create trigger
      </button>
      <Dialog open={open} title="Create a trigger" onClose={() => setOpen(false)}>
        <form onSubmit={submit}>
          <label htmlFor={`${uid}-desc`}>Description (optional)</label>
          <input id={`${uid}-desc`} value={description} onChange={(e) => setDescription(e.target.value)} placeholder="e.g. New orders from the shop" maxLength={2000} />
          <p className="help">What sends to this webhook and why. A new trigger is active at once.</p>
          <ErrorBox error={error} />
          <div className="actions">
            <button type="button" className="btn" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" className="btn primary" disabled={busy}>
              {busy ? "Creating…" : "Create trigger"}
            </button>
          </div>
        </form>
      </Dialog>
      <Dialog open={!!created} title="Trigger created" onClose={() => (go(`triggers/${created!.trigger.id}`), setCreated(null))} wide>
        {created ? (
          <div>
            <p>POST JSON to the webhook URL with the secret in <code>x-trigger-secret</code>. You can copy the secret again later on the trigger's page.</p>
            <CopyField label="Webhook URL" value={created.webhookUrl} />
            <CopyField label="Secret" value={created.secret} />
            <CopyField label="Test command" value={created.testCommand} multiline />
            <details>
              <summary>Signed variant (X-Service-Signature with a timestamp)</summary>
              <CopyField label="Signed test command" value={created.signedTestCommand} multiline />
            </details>
            <div className="actions">
              <button type="button" className="btn primary" data-autofocus onClick={() => (go(`triggers/${created.trigger.id}`), setCreated(null))}>
                Open the trigger
              </button>
            </div>
          </div>
        ) : null}
      </Dialog>
    </>
  );
}

// ---- one trigger ----

export function TriggerPage({ id, onRun }: { id: string; onRun: () => Promise<void> }) {
  const { data: trigger, error, loading, setData } = useAsync(() => api.trigger(id), [id]);
  if (loading && !trigger) return <p className="muted">Loading…</p>;
  if (error) return <ErrorBox error={error} />;
  if (!trigger)
    return (
      <section>
        <h1>Trigger not found</h1>
        <p>
          It may have been deleted with its agent. <a href="#/triggers">Back to triggers</a>
        </p>
      </section>
    );
  const patch = (p: Partial<Trigger>) => setData({ ...trigger, ...p });
  return (
    <section>
      <p className="crumbs">
        <a href="#/triggers">Triggers</a> / {trigger.agent ? <a href={`#/agents/${trigger.agent.id}`}>{trigger.agent.name}</a> : null} /
      </p>
      <div className="page-head">
        <h1>{trigger.description || "Trigger"}</h1>
        <span data-testid="trigger-state">
          <InactiveBadge active={trigger.active} />
        </span>
      </div>
      <ActivePanel trigger={trigger} onChange={patch} />
      <DetailsPanel trigger={trigger} onChange={patch} />
      <SecretPanel trigger={trigger} onChange={patch} />
      <TestTool trigger={trigger} onRun={onRun} />
      <LogsPanel triggerId={trigger.id} initial={trigger.logs} onChange={() => void onRun()} />
    </section>
  );
}

function ActivePanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const { busy, error, run } = useAction();
  const toggle = () =>
    run(async () => {
      const t = await api.setTriggerActive(trigger.id, !trigger.active);
      onChange({ active: t.active });
    });
  return (
    <section className="panel" aria-labelledby="active-h">
      <h2 id="active-h" className="sr-only">
        Activity
      </h2>
      <div className="switch-row">
        <button type="button" role="switch" aria-checked={trigger.active} className={`switch${trigger.active ? " on" : ""}`} onClick={toggle} disabled={busy} id="active-switch">
          <span className="knob" aria-hidden="true" />
        </button>
        <label htmlFor="active-switch">{trigger.active ? "Active: webhooks are accepted" : "Inactive: webhooks are rejected (403 trigger_inactive)"}</label>
      </div>
      <ErrorBox error={error} />
    </section>
  );
}

function DetailsPanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(trigger.description ?? "");
  const { busy, error, run } = useAction();
  const uid = useId();
  const save = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      const t = await api.updateTrigger(trigger.id, value.trim() || null);
      onChange({ description: t.description });
      setEditing(false);
    });
  };
  return (
    <section className="panel" aria-labelledby="details-h">
      <h2 id="details-h">Webhook</h2>
      <CopyField label="Webhook URL" value={trigger.webhookUrl} />
      {editing ? (
        <form onSubmit={save} className="inline-form">
          <label htmlFor={`${uid}-d`}>Description</label>
          <input id={`${uid}-d`} value={value} onChange={(e) => setValue(e.target.value)} maxLength={2000} autoFocus />
          <button type="submit" className="btn primary" disabled={busy}>
            Save
          </button>
          <button type="button" className="btn" onClick={() => (setEditing(false), setValue(trigger.description ?? ""))}>
            Cancel
          </button>
        </form>
      ) : (
        <p>
          <strong>Description:</strong> {trigger.description || <span className="muted">none</span>}{" "}
          <button type="button" className="btn small" onClick={() => setEditing(true)}>
            Edit description
          </button>
        </p>
      )}
      <ErrorBox error={error} />
      <p className="help">
        Bodies must be JSON (<code>Content-Type: application/json</code>) of at most 1 MB. The call answers <code>202</code> with a <code>job_id</code>; poll{" "}
        <code>/api/agent-run-jobs/&lt;job_id&gt;/status</code> and <code>/result</code> with the same <code>x-trigger-secret</code>.
      </p>
      {trigger.secret ? (
        <CopyField
          label="Test command"
          multiline
          value={`curl -X POST '${trigger.webhookUrl}' \\\n  -H 'Content-Type: application/json' \\\n  -H 'x-trigger-secret: ${trigger.secret}' \\\n  -d '{"hello": "world"}'`}
        />
      ) : null}
    </section>
  );
}

function SecretPanel({ trigger, onChange }: { trigger: Trigger; onChange: (p: Partial<Trigger>) => void }) {
  const [revealed, setRevealed] = useState(false);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [custom, setCustom] = useState(false);
  const [customValue, setCustomValue] = useState("");
  const [customError, setCustomError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [graceUntil, setGraceUntil] = useState<string | null>(null);
  const [requiredError, setRequiredError] = useState<string>();
  const uid = useId();
  const secret = trigger.secret ?? "";

  const saveCustom = async (e: FormEvent) => {
    e.preventDefault();
    const v = customValue;
    if (v.length < 24 || v.length > 256) return setCustomError(`A secret must be 24 to 256 characters (this one has ${v.length}).`);
    if (!/^[\x20-\x7e]+$/.test(v) || v !== v.trim()) return setCustomError("Use printable ASCII characters only, with no space at the start or end.");
    setBusy(true);
    setCustomError(undefined);
    try {
      const t = await api.setTriggerSecret(trigger.id, v);
      onChange({ secret: t.secret });
      setGraceUntil(new Date(Date.now() + 24 * 3600_000).toISOString());
      setCustom(false);
      setCustomValue("");
    } catch (err) {
      setCustomError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel" aria-labelledby="secret-h">
      <h2 id="secret-h">Secret</h2>
      <p className="help">
        Send it as <code>x-trigger-secret</code>, or sign the body with it (HMAC-SHA256 in <code>X-Service-Signature</code>, or Standard Webhooks headers).
      </p>
      <div className="copy-field">
        <div className="copy-field-head">
          <label htmlFor={`${uid}-s`}>Current secret</label>
          <span className="btn-row">
            <button type="button" className="btn small" onClick={() => setRevealed((r) => !r)} aria-pressed={revealed}>
              {revealed ? "Hide" : "Reveal"}
            </button>
            <CopyButton text={secret} what="secret" />
          </span>
        </div>
        <input id={`${uid}-s`} className="mono" readOnly type={revealed ? "text" : "password"} value={secret} data-testid="secret" />
      </div>
      {graceUntil ? (
        <Notice>
          <span data-testid="grace-notice">
            The old secret keeps working for 24 hours, until <Time iso={graceUntil} />. Update the systems that call this webhook before then.
          </span>
        </Notice>
      ) : null}
      <label className="check">
        <input
          type="checkbox"
          checked={trigger.secretRequired}
          disabled={busy}
          onChange={async (e) => {
            const required = e.target.checked;
            setBusy(true);
            setRequiredError(undefined);
            onChange({ secretRequired: required }); // optimistic; reverted if the server refuses
            try {
              const t = await api.setSecretRequired(trigger.id, required);
              onChange({ secretRequired: t.secretRequired });
            } catch (err) {
              onChange({ secretRequired: !required });
              setRequiredError((err as Error).message);
            } finally {
              setBusy(false);
            }
          }}
        />{" "}
        Require the secret or a signature on every webhook (recommended)
      </label>
      {!trigger.secretRequired ? (
        <p className="warning" role="status">
          Anyone who knows the webhook URL can start runs of this agent.
        </p>
      ) : null}
      <ErrorBox error={requiredError} />
      <div className="btn-row">
        <button type="button" className="btn" onClick={() => setConfirmRotate(true)}>
          Regenerate secret…
        </button>
        <button type="button" className="btn" onClick={() => (setCustom(true), setCustomError(undefined))}>
          Set a custom secret…
        </button>
      </div>
      <ConfirmDialog
        open={confirmRotate}
        title="Regenerate the secret?"
        body={
          <p>
            A new secret is issued. The old secret keeps working for <strong>24 hours</strong> (until {new Date(Date.now() + 24 * 3600_000).toLocaleString()}), then stops: update
            the calling systems before then.
          </p>
        }
        confirmLabel="Regenerate"
        onClose={() => setConfirmRotate(false)}
        onConfirm={async () => {
          const r = await api.rotateTriggerSecret(trigger.id);
          onChange({ secret: r.secret });
          setGraceUntil(r.previousSecretExpiresAt);
        }}
      />
      <Dialog open={custom} title="Set a custom secret" onClose={() => setCustom(false)}>
        <form onSubmit={saveCustom}>
          <label htmlFor={`${uid}-c`}>New secret</label>
          <input id={`${uid}-c`} className="mono" value={customValue} onChange={(e) => setCustomValue(e.target.value)} autoComplete="off" aria-describedby={`${uid}-c-help`} />
          <p className="help" id={`${uid}-c-help`}>
            24 to 256 printable characters. The old secret keeps working for 24 hours, then stops.
          </p>
          <ErrorBox error={customError} />
          <div className="actions">
            <button type="button" className="btn" onClick={() => setCustom(false)}>
              Cancel
            </button>
            <button type="submit" className="btn primary" disabled={busy}>
              Save secret
            </button>
          </div>
        </form>
      </Dialog>
    </section>
  );
}

// ---- test tool ----

const byteLength = (s: string) => new TextEncoder().encode(s).length;
const fmtBytes = (n: number) => (n < 1024 ? `${n} bytes` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(2)} MB`);

function TestTool({ trigger, onRun }: { trigger: Trigger; onRun: () => Promise<void> }) {
  const [payload, setPayload] = useState('{\n  "hello": "world"\n}\n');
  const [error, setError] = useState<string>();
  const [job, setJob] = useState<Job | null>(null);
  const [sending, setSending] = useState(false);
  const stopRef = useRef<() => void>(undefined);
  const uid = useId();
  useEffect(() => () => stopRef.current?.(), []);

  const size = byteLength(payload);
  let parseError: string | null = null;
  let parseLine: number | null = null;
  try {
    JSON.parse(payload);
  } catch (e) {
    parseError = (e as Error).message;
    const m = /line (\d+)/.exec(parseError);
    parseLine = m ? Number(m[1]) : null;
  }
  const tooBig = size > MAX_PAYLOAD_BYTES;

  const send = async () => {
    setError(undefined);
    if (parseError) return setError(`The payload is not valid JSON: ${parseError}`);
    if (tooBig) return setError(`The payload is ${fmtBytes(size)}; the limit is 1 MB (1,048,576 bytes).`);
    stopRef.current?.();
    setSending(true);
    setJob(null);
    try {
      const j = await api.sendTestWebhook(trigger.id, JSON.parse(payload));
      setJob(j);
      stopRef.current = followJob(
        j.id,
        (next) => {
          setJob(next);
          if (next.status === "DONE" || next.status === "FAILED") void onRun();
        },
        (e) => setError(e.message),
      );
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setSending(false);
    }
  };
  const waiting = !!job && (job.status === "QUEUED" || job.status === "RUNNING");
  const finished = !!job && !waiting;
  const ms = job?.startedAt && job.finishedAt ? new Date(job.finishedAt).getTime() - new Date(job.startedAt).getTime() : null;

  return (
    <section className="panel" aria-labelledby="test-h">
      <h2 id="test-h">Test</h2>
      <p className="help">Sends the payload through the same path as a real webhook and follows the run live.</p>
      <label htmlFor={`${uid}-p`}>JSON payload</label>
      <CodeEditor
        id={`${uid}-p`}
        value={payload}
        onChange={setPayload}
        rows={6}
        invalid={!!parseError || tooBig}
        errorLine={parseLine}
        describedBy={`${uid}-p-status`}
      />
      <p id={`${uid}-p-status`} className={parseError || tooBig ? "field-error" : "help"}>
        {parseError ? `Not valid JSON: ${parseError}` : tooBig ? `Too large: ${fmtBytes(size)}.` : "Valid JSON."} {fmtBytes(size)} of the 1 MB limit.
      </p>
      <div className="actions">
        <button type="button" className="btn primary" onClick={send} disabled={sending || waiting}>
          Send test
        </button>
        {!trigger.active ? <span className="muted">The trigger is inactive, so the test is rejected like a real webhook would be.</span> : null}
      </div>
      <ErrorBox error={error} />
      <div aria-live="polite" data-testid="test-result">
        {waiting ? (
          <p className="waiting">
            <span className="spinner" aria-hidden="true" /> Waiting for result... <StatusBadge status={job!.status} />
          </p>
        ) : null}
        {finished && job ? (
          <div className="result">
            <h3>
              Result: <StatusBadge status={job.status} />
            </h3>
            <dl className="kv">
              <dt>Job</dt>
              <dd className="mono">{job.id}</dd>
              <dt>Duration</dt>
              <dd>{duration(ms)}</dd>
              <dt>Attempts</dt>
              <dd>{job.attempts}</dd>
              <dt>Cost</dt>
              <dd>${job.cost}</dd>
              <dt>Thread</dt>
              <dd>{job.threadId ? <a href={`#/threads/${job.threadId}`}>{job.threadId}</a> : <span className="muted">none</span>}</dd>
            </dl>
            {job.error ? (
              <div className="error" data-testid="test-error">
                <strong>Error:</strong> {job.error}
              </div>
            ) : null}
            {job.status === "DONE" ? (
              <>
                <h4>Result JSON</h4>
                <pre className="code" data-testid="test-result-json" tabIndex={0}>
                  {JSON.stringify(job.result, null, 2)}
                </pre>
              </>
            ) : null}
            {job.logs.length ? (
              <>
                <h4>Script log</h4>
                <pre className="code">{job.logs.join("\n")}</pre>
              </>
            ) : null}
          </div>
        ) : null}
      </div>
    </section>
  );
}

// ---- logs ----

function LogsPanel({ triggerId, initial, onChange }: { triggerId: string; initial: LogEntry[]; onChange: () => void }) {
  const [logs, setLogs] = useState(initial);
  const [error, setError] = useState<string>();
  const [live, setLive] = useState(isSocketUp());
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let pending: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      try {
        const l = await api.triggerLogs(triggerId, 50);
        if (!stopped) {
          setLogs(l);
          setError(undefined);
        }
      } catch (e) {
        if (!stopped) setError((e as Error).message);
      }
    };
    const poll = () => {
      timer = setTimeout(async () => {
        await refresh();
        if (!stopped) poll();
      }, isSocketUp() ? 15_000 : 3000);
    };
    const unsub = subscribeJobs({ triggerId }, () => {
      clearTimeout(pending);
      pending = setTimeout(() => void refresh(), 100);
      onChangeRef.current();
    });
    const off = onSocketState((up) => {
      setLive(up);
      if (up) void refresh();
    });
    void refresh();
    poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(pending);
      unsub();
      off();
    };
  }, [triggerId]);

  return (
    <section className="panel" aria-labelledby="logs-h">
      <div className="panel-head">
        <h2 id="logs-h">Logs</h2>
        <span className={`live ${live ? "on" : ""}`}>{live ? "● Live" : "○ Polling"}</span>
      </div>
      <ErrorBox error={error} />
      {logs.length === 0 ? (
        <Empty>No runs yet. Send a test above or POST to the webhook URL; runs appear here as they happen.</Empty>
      ) : (
        <div className="table-wrap">
          <table data-testid="logs">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Status</th>
                <th scope="col">Duration</th>
                <th scope="col">Thread</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {logs.map((l) => (
                <tr key={l.jobId}>
                  <td data-label="Time">
                    <Time iso={l.time} />
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={l.status} />
                  </td>
                  <td data-label="Duration">{duration(l.durationMs)}</td>
                  <td data-label="Thread">{l.threadId ? <a href={`#/threads/${l.threadId}`}>View thread</a> : <span className="muted">—</span>}</td>
                  <td data-label="Error" className="log-error">
                    {l.error ?? <span className="muted">—</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
