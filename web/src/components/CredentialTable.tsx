import type { ReactNode } from "react";
import { Time } from "./Time";

export interface CredentialRow {
  id: string;
  name: string;
  /** What is shown of the secret (prefix…last4). */
  masked: string;
  lastUsedAt: string | null;
  createdAt: string;
  /** Shown in the `limits` column when the table has one (API keys: expiry and spend). */
  limits?: ReactNode;
}

/** API keys and admin tokens alike: name, masked value, last use, creation, one destructive action. */
export function CredentialTable({
  rows,
  caption,
  valueLabel,
  action,
  onAction,
  testId,
  limits,
}: {
  rows: CredentialRow[];
  caption: string;
  valueLabel: string;
  action: { label: string; aria: (row: CredentialRow) => string };
  onAction: (id: string) => void;
  testId?: string;
  /** The heading of a column showing each row's `limits`. */
  limits?: string;
}) {
  return (
    <div className="table-wrap">
      <table data-testid={testId}>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">{valueLabel}</th>
            {limits && <th scope="col">{limits}</th>}
            <th scope="col">Last used</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td data-label="Name">{r.name || <span className="muted">unnamed</span>}</td>
              <td data-label={valueLabel} className="mono">
                {r.masked}
              </td>
              {limits && <td data-label={limits}>{r.limits}</td>}
              <td data-label="Last used">{r.lastUsedAt ? <Time iso={r.lastUsedAt} /> : <span className="muted">never</span>}</td>
              <td data-label="Created">
                <Time iso={r.createdAt} />
              </td>
              <td>
                <button type="button" className="btn small danger" onClick={() => onAction(r.id)} aria-label={action.aria(r)}>
                  {action.label}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
