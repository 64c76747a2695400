import type { Delivery } from "../api";
import { duration } from "../format";
import { Time } from "./Time";

/** Attempts to deliver outbound events: when, where, what the receiver answered or why it failed. */
export function DeliveriesTable({ deliveries }: { deliveries: Delivery[] }) {
  return (
    <div className="table-wrap">
      <table data-testid="deliveries">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Attempt</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Error</th>
            <th scope="col">webhook-id</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={`${d.deliveryId}-${d.attempt}`}>
              <td data-label="Time">
                <Time iso={d.at} />
              </td>
              <td data-label="Attempt">{d.attempt}</td>
              <td data-label="Status">{d.statusCode ?? <span className="muted">no answer</span>}</td>
              <td data-label="Duration">{duration(d.durationMs)}</td>
              <td data-label="Error">{d.error ?? <span className="muted">none</span>}</td>
              <td data-label="webhook-id" className="mono">
                {d.webhookId}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
