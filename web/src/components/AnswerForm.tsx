import { useId, useState, type FormEvent } from "react";
import { api, type InputRequest, type Job } from "../api";
import { initialJson, simpleFields, valueOfFields, type Field } from "../answer-schema";
import { useAction } from "../hooks/useAction";
import { CodeEditor } from "./CodeEditor";
import { ErrorBox } from "./ErrorBox";
import { Time } from "./Time";

/**
 * The question an INPUT_REQUIRED run waits on, and the form that answers it (answerJobInput).
 * A flat object schema gets one input per field; any other question a JSON text. The server
 * checks the answer against the schema: its message is shown and the run keeps waiting.
 */
export function AnswerForm({ jobId, request, onAnswered }: { jobId: string; request: InputRequest; onAnswered: (job: Job) => void }) {
  const uid = useId();
  const fields = simpleFields(request.schema);
  const [asJson, setAsJson] = useState(!fields);
  const [inputs, setInputs] = useState<Record<string, string | boolean>>({});
  const [json, setJson] = useState(() => initialJson(request.schema));
  const { busy, error, setError, run } = useAction();

  let parseError: string | undefined;
  if (asJson) {
    try {
      JSON.parse(json);
    } catch (e) {
      parseError = (e as Error).message;
    }
  }
  const switchToJson = () => {
    if (fields) setJson(`${JSON.stringify(valueOfFields(fields, inputs), null, 2)}\n`);
    setAsJson(true);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (asJson && parseError) return setError(`The answer is not valid JSON: ${parseError}`);
    const value = asJson || !fields ? JSON.parse(json) : valueOfFields(fields, inputs);
    void run(async () => onAnswered(await api.answerJobInput(jobId, value)));
  };

  return (
    <form className="answer-form" aria-labelledby={`${uid}-h`} onSubmit={submit} data-testid="answer-form">
      <h3 id={`${uid}-h`}>The run asks</h3>
      <p className="question" data-testid="question">
        {request.prompt}
      </p>
      <p className="help">
        Waits until <Time iso={request.expiresAt} />; unanswered by then, the script's <code>ctx.ask</code> throws <code>input_timeout</code>.
      </p>
      {!asJson && fields ? (
        fields.map((f) => <FieldInput key={f.name} id={`${uid}-${f.name}`} field={f} value={inputs[f.name] ?? f.initial} onChange={(v) => setInputs({ ...inputs, [f.name]: v })} />)
      ) : (
        <>
          <label htmlFor={`${uid}-json`}>Answer (JSON)</label>
          <CodeEditor id={`${uid}-json`} value={json} onChange={setJson} rows={Math.min(12, Math.max(3, json.split("\n").length))} invalid={!!parseError} describedBy={`${uid}-json-status`} />
          <p id={`${uid}-json-status`} className={parseError ? "field-error" : "help"}>
            {parseError ? `Not valid JSON: ${parseError}` : request.schema ? "Valid JSON; the server checks it against the question's schema." : "Any JSON value."}
          </p>
        </>
      )}
      <ErrorBox error={error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={busy}>
          {busy ? "Sending…" : "Submit answer"}
        </button>
        {fields && !asJson ? (
          <button type="button" className="btn" onClick={switchToJson}>
            Edit as JSON
          </button>
        ) : null}
      </div>
    </form>
  );
}

function FieldInput({ id, field, value, onChange }: { id: string; field: Field; value: string | boolean; onChange: (v: string | boolean) => void }) {
  const help = field.description ? <p className="help" id={`${id}-d`}>{field.description}</p> : null;
  const describedBy = field.description ? `${id}-d` : undefined;
  if (field.kind === "boolean") {
    return (
      <div className="field">
        <label className="check">
          <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} aria-describedby={describedBy} />
          {field.label}
        </label>
        {help}
      </div>
    );
  }
  const label = (
    <label htmlFor={id}>
      {field.label}
      {field.required ? <span className="muted"> (required)</span> : null}
    </label>
  );
  return (
    <div className="field">
      {label}
      {field.kind === "enum" ? (
        <select id={id} value={String(value)} onChange={(e) => onChange(e.target.value)} aria-describedby={describedBy}>
          <option value="">Choose…</option>
          {field.options.map((o, i) => (
            <option key={i} value={String(i)}>
              {String(o)}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type="text"
          inputMode={field.kind === "string" ? undefined : field.kind === "integer" ? "numeric" : "decimal"}
          value={String(value)}
          onChange={(e) => onChange(e.target.value)}
          aria-describedby={describedBy}
        />
      )}
      {help}
    </div>
  );
}
