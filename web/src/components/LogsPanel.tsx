import { useEffect, useRef, useState } from "react";
import { api, isSocketUp, onSocketState, subscribeJobs, type LogEntry } from "../api";
import { duration } from "../format";
import { Empty } from "./Empty";
import { ErrorBox } from "./ErrorBox";
import { StatusBadge } from "./StatusBadge";
import { Time } from "./Time";

export function LogsPanel({ triggerId, initial, onChange }: { triggerId: string; initial: LogEntry[]; onChange: () => void }) {
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
        <a href={`#/triggers/${triggerId}/jobs`}>All runs, a page at a time</a>
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
