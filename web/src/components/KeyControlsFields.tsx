import { useId } from "react";
import type { KeyControlsInput, SpendLimitPeriod } from "../api";

/** What the form holds: an expiry choice (never, 30 / 90 days, a date) and a spend limit. */
export interface KeyControlsDraft {
  expiry: "never" | "30" | "90" | "date" | "keep";
  date: string;
  spendLimit: string;
  period: SpendLimitPeriod;
}

export const emptyControls = (): KeyControlsDraft => ({ expiry: "never", date: "", spendLimit: "", period: "MONTH" });

const DAY_MS = 86_400_000;

/** The draft as API arguments, or a message saying what to fix. */
export function controlsOf(d: KeyControlsDraft, current?: string | null): KeyControlsInput | string {
  let expiresAt: string | null = null;
  if (d.expiry === "keep") expiresAt = current ?? null;
  else if (d.expiry === "30" || d.expiry === "90") expiresAt = new Date(Date.now() + Number(d.expiry) * DAY_MS).toISOString();
  else if (d.expiry === "date") {
    const t = new Date(`${d.date}T00:00:00Z`);
    if (!d.date || Number.isNaN(t.getTime())) return "Choose the date the key expires.";
    if (t.getTime() <= Date.now()) return "The expiry date must be in the future.";
    expiresAt = t.toISOString();
  }
  const limit = d.spendLimit.trim();
  if (limit && !/^\d{1,12}(\.\d{1,6})?$/.test(limit)) return "The spend limit is a USD amount, e.g. 5 or 0.25.";
  return { expiresAt, spendLimit: limit || null, spendLimitPeriod: limit ? d.period : null };
}

export function KeyControlsFields({ draft, onChange, canKeep }: { draft: KeyControlsDraft; onChange: (d: KeyControlsDraft) => void; canKeep?: boolean }) {
  const uid = useId();
  return (
    <>
      <label htmlFor={`${uid}-exp`}>Expires</label>
      <select id={`${uid}-exp`} value={draft.expiry} onChange={(e) => onChange({ ...draft, expiry: e.target.value as KeyControlsDraft["expiry"] })}>
        {canKeep && <option value="keep">as it is</option>}
        <option value="never">never</option>
        <option value="30">in 30 days</option>
        <option value="90">in 90 days</option>
        <option value="date">on a date…</option>
      </select>
      {draft.expiry === "date" && (
        <>
          <label htmlFor={`${uid}-date`}>Expiry date (UTC midnight)</label>
          <input id={`${uid}-date`} type="date" value={draft.date} onChange={(e) => onChange({ ...draft, date: e.target.value })} />
        </>
      )}
      <label htmlFor={`${uid}-limit`}>Spend limit (USD, empty: none)</label>
      <input id={`${uid}-limit`} inputMode="decimal" value={draft.spendLimit} onChange={(e) => onChange({ ...draft, spendLimit: e.target.value })} placeholder="e.g. 5" />
      <label htmlFor={`${uid}-period`}>Per</label>
      <select id={`${uid}-period`} value={draft.period} onChange={(e) => onChange({ ...draft, period: e.target.value as SpendLimitPeriod })}>
        <option value="DAY">day (UTC)</option>
        <option value="MONTH">month (UTC)</option>
        <option value="TOTAL">in total</option>
      </select>
      <p className="help">An expired key answers 401; over its limit, 402 key_spend_limit_exceeded. Open calls count at their worst case until they finish.</p>
    </>
  );
}
