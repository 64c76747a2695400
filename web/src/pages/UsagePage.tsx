import { useId, useState } from "react";
import { api } from "../api";
import { CostChart } from "../components/CostChart";
import { Empty } from "../components/Empty";
import { ErrorBox } from "../components/ErrorBox";
import { useAsync } from "../hooks/useAsync";

const DAY_MS = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Days from `from` to `to` inclusive (UTC), as YYYY-MM-DD. */
function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < 400; t += DAY_MS) out.push(isoDay(t));
  return out;
}

/** Spending on model calls: cost per day by agent (chart) and totals by agent and model (table). */
export function UsagePage() {
  const uid = useId();
  const [from, setFrom] = useState(() => isoDay(Date.now() - 29 * DAY_MS));
  const [to, setTo] = useState(() => isoDay(Date.now()));
  const valid = /^\d{4}-\d{2}-\d{2}$/.test(from) && /^\d{4}-\d{2}-\d{2}$/.test(to) && from <= to;
  const range = valid ? { from: `${from}T00:00:00.000Z`, to: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString() } : null;
  const agents = useAsync(() => api.agents(), []);
  const byDay = useAsync(async () => (range ? api.usage(range.from, range.to, ["DAY", "AGENT"]) : []), [from, to]);
  const byModel = useAsync(async () => (range ? api.usage(range.from, range.to, ["AGENT", "MODEL"]) : []), [from, to]);
  const names = new Map(agents.data?.map((a) => [a.id, a.name]));
  const agentName = (id: string | null) => (id ? (names.get(id) ?? `${id} (deleted)`) : "—");
  const total = (byModel.data ?? []).reduce((n, r) => n + Math.round(Number(r.cost) * 1e6), 0);
  return (
    <section>
      <h1>Usage</h1>
      <div className="inline-form">
        <label htmlFor={`${uid}-from`}>From</label>
        <input id={`${uid}-from`} type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
        <label htmlFor={`${uid}-to`}>To</label>
        <input id={`${uid}-to`} type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
      </div>
      {!valid ? <ErrorBox error="Choose a start date on or before the end date." /> : null}
      <ErrorBox error={byDay.error ?? byModel.error} />
      <p>
        Total: <strong data-testid="usage-total">${(total / 1e6).toFixed(6)}</strong> (UTC days)
      </p>
      <section className="panel" aria-labelledby="chart-h">
        <h2 id="chart-h">Cost per day by agent</h2>
        {byDay.data && byDay.data.length > 0 && range ? (
          <CostChart rows={byDay.data} days={daysBetween(from, to)} agentName={agentName} />
        ) : (
          <Empty>No model calls in this period.</Empty>
        )}
      </section>
      <section className="panel" aria-labelledby="models-h">
        <h2 id="models-h">By agent and model</h2>
        {byModel.data && byModel.data.length > 0 ? (
          <div className="table-wrap">
            <table data-testid="usage-table">
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Model</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Input tokens</th>
                  <th scope="col">Output tokens</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {byModel.data.map((r) => (
                  <tr key={`${r.agentId}/${r.model}`}>
                    <td data-label="Agent">{agentName(r.agentId)}</td>
                    <td data-label="Model" className="mono">
                      {r.model}
                    </td>
                    <td data-label="Requests">{r.requests}</td>
                    <td data-label="Input tokens">{r.inputTokens}</td>
                    <td data-label="Output tokens">{r.outputTokens}</td>
                    <td data-label="Cost">${r.cost}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <Empty>No model calls in this period.</Empty>
        )}
      </section>
    </section>
  );
}
