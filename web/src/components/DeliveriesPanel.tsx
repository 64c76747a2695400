import { api } from "../api";
import { useAction } from "../hooks/useAction";
import { useAsync } from "../hooks/useAsync";
import { DeliveriesTable } from "./DeliveriesTable";
import { ErrorBox } from "./ErrorBox";

/** A finished job's completion callback: every attempt, and a button that sends it again (same webhook-id). */
export function DeliveriesPanel({ jobId, finished }: { jobId: string; finished: boolean }) {
  const { data, error, reload } = useAsync(() => api.deliveries(jobId), [jobId]);
  const action = useAction();
  const deliveries = data ?? [];
  const pending = deliveries.some((d) => d.deliveryStatus === "PENDING");
  return (
    <section className="panel" aria-labelledby="deliveries-h">
      <h2 id="deliveries-h">Completion callback</h2>
      <ErrorBox error={error ?? action.error} />
      {deliveries.length > 0 ? <DeliveriesTable deliveries={deliveries} /> : <p className="muted">No delivery attempts{pending ? " yet" : ""}.</p>}
      <div className="btn-row">
        <button type="button" className="btn small" onClick={() => void reload()}>
          Refresh
        </button>
        {finished ? (
          <button
            type="button"
            className="btn small"
            disabled={action.busy}
            data-testid="redeliver"
            onClick={() =>
              void action.run(async () => {
                await api.redeliver(jobId);
                await new Promise((r) => setTimeout(r, 1500));
                await reload();
              })
            }
          >
            Redeliver
          </button>
        ) : null}
      </div>
      <p className="help">
        A redelivery sends the same event (same <code>webhook-id</code> and body) to the trigger's current callback URL, as a new series of attempts.
      </p>
    </section>
  );
}
