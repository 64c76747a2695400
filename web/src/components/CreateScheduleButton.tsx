import { useId, useState, type FormEvent } from "react";
import { api, type Schedule, type ScheduleOverlap } from "../api";
import { useAction } from "../hooks/useAction";
import { Dialog } from "./Dialog";
import { FormActions } from "./FormActions";

type Kind = "every" | "cron";

/** The "Create schedule" button and its form: an interval or a cron in a time zone, the payload each run gets. */
export function CreateScheduleButton({ agentId, onCreated }: { agentId: string; onCreated: (s: Schedule) => void }) {
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState<Kind>("every");
  const [every, setEvery] = useState("5m");
  const [cron, setCron] = useState("0 9 * * MON-FRI");
  const [timezone, setTimezone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");
  const [payload, setPayload] = useState("{}");
  const [overlap, setOverlap] = useState<ScheduleOverlap>("SKIP");
  const [description, setDescription] = useState("");
  const { busy, error, setError, run } = useAction();
  const uid = useId();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return setError("The payload is not valid JSON.");
    }
    return run(async () => {
      const s = await api.createSchedule({
        agentId,
        ...(kind === "every" ? { every: every.trim() } : { cron: cron.trim() }),
        timezone: timezone.trim() || "UTC",
        payload: parsed,
        overlap,
        description: description.trim() || null,
      });
      setOpen(false);
      onCreated(s);
    });
  };

  return (
    <>
      <button type="button" className="btn primary" onClick={() => (setOpen(true), setError(undefined))}>
        Create schedule
      </button>
      <Dialog open={open} title="Create a schedule" onClose={() => setOpen(false)}>
        <form onSubmit={submit}>
          <fieldset>
            <legend>Runs</legend>
            <label className="check">
              <input type="radio" name={`${uid}-kind`} checked={kind === "every"} onChange={() => setKind("every")} /> At an interval
            </label>
            <label className="check">
              <input type="radio" name={`${uid}-kind`} checked={kind === "cron"} onChange={() => setKind("cron")} /> On a cron expression
            </label>
          </fieldset>
          {kind === "every" ? (
            <>
              <label htmlFor={`${uid}-every`}>Every</label>
              <input id={`${uid}-every`} className="mono" value={every} onChange={(e) => setEvery(e.target.value)} aria-describedby={`${uid}-every-help`} />
              <p className="help" id={`${uid}-every-help`}>
                A number and a unit: <code>90s</code>, <code>5m</code>, <code>1h</code>, <code>1d</code> (at least 1 minute unless the installation allows less).
              </p>
            </>
          ) : (
            <>
              <label htmlFor={`${uid}-cron`}>Cron</label>
              <input id={`${uid}-cron`} className="mono" value={cron} onChange={(e) => setCron(e.target.value)} aria-describedby={`${uid}-cron-help`} />
              <p className="help" id={`${uid}-cron-help`}>
                Five fields: minute hour day-of-month month day-of-week, e.g. <code>*/15 * * * *</code>.
              </p>
            </>
          )}
          <label htmlFor={`${uid}-tz`}>Time zone</label>
          <input id={`${uid}-tz`} value={timezone} onChange={(e) => setTimezone(e.target.value)} placeholder="UTC" />
          <label htmlFor={`${uid}-payload`}>Payload (JSON)</label>
          <textarea id={`${uid}-payload`} className="mono" rows={4} value={payload} onChange={(e) => setPayload(e.target.value)} />
          <label htmlFor={`${uid}-overlap`}>If the previous run is still running</label>
          <select id={`${uid}-overlap`} value={overlap} onChange={(e) => setOverlap(e.target.value as ScheduleOverlap)}>
            <option value="SKIP">Skip this run</option>
            <option value="BUFFER_ONE">Run it when the previous one ends</option>
            <option value="ALLOW_ALL">Run it anyway</option>
          </select>
          <label htmlFor={`${uid}-desc`}>Description (optional)</label>
          <input id={`${uid}-desc`} value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} />
          <FormActions error={error} busy={busy} onCancel={() => setOpen(false)} submit="Create schedule" busyLabel="Creating…" />
        </form>
      </Dialog>
    </>
  );
}
