import type { ReactNode } from "react";
import type { TriggerSummary } from "../api";
import { Empty } from "./Empty";
import { InactiveBadge } from "./InactiveBadge";
import { Time } from "./Time";

export function TriggerList({ triggers, showAgent, empty }: { triggers: TriggerSummary[]; showAgent: boolean; empty: ReactNode }) {
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
