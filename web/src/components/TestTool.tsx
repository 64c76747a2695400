import { useEffect, useId, useRef, useState } from "react";
import { api, followJob, MAX_PAYLOAD_BYTES, type Job, type Trigger } from "../api";
import { byteLength, duration, fmtBytes, runMs } from "../format";
import { AnswerForm } from "./AnswerForm";
import { CancelJobButton } from "./CancelJobButton";
import { CodeEditor } from "./CodeEditor";
import { ErrorBox } from "./ErrorBox";
import { StatusBadge } from "./StatusBadge";

export function TestTool({ trigger, onRun }: { trigger: Trigger; onRun: () => Promise<void> }) {
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
  const asking = !!job && job.status === "INPUT_REQUIRED";
  const finished = !!job && (job.status === "DONE" || job.status === "FAILED");
  // The answer's and the cancel's own answers move the view at once; the live follow does the rest.
  const moved = (next: { id: string; status: Job["status"] }) => setJob((j) => (j && j.id === next.id && next.status !== j.status ? { ...j, ...next } : j));
  const ms = runMs(job);

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
        <button type="button" className="btn primary" onClick={send} disabled={sending || waiting || asking}>
          Send test
        </button>
        {!trigger.active ? <span className="muted">The trigger is inactive, so the test is rejected like a real webhook would be.</span> : null}
      </div>
      <ErrorBox error={error} />
      <div aria-live="polite" data-testid="test-result">
        {waiting ? (
          <p className="waiting">
            <span className="spinner" aria-hidden="true" /> Waiting for result... <StatusBadge status={job!.status} />
            <CancelJobButton jobId={job!.id} small onCancelled={moved} />
          </p>
        ) : null}
        {asking && job ? (
          <div className="result">
            <p className="waiting">
              Waiting for an answer <StatusBadge status={job.status} />
              <CancelJobButton jobId={job.id} small onCancelled={moved} />
            </p>
            {job.inputRequest ? <AnswerForm key={job.inputRequest.id} jobId={job.id} request={job.inputRequest} onAnswered={moved} /> : null}
          </div>
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
