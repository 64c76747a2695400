import { createClient, type Client as WsClient } from "graphql-ws";
import WebSocket from "ws";

/** A graphql-ws subscription to a trigger's job events; `ca` for wss through the balancer. */
export function subscribe(url: string, admin: string, filter: { triggerId: string } | { jobId: string }, ca?: string) {
  const terminal = new Set<string>();
  const state = { closed: false, disposed: false, error: undefined as unknown };
  const impl = ca
    ? class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { ca });
        }
      }
    : WebSocket;
  const ws: WsClient = createClient({
    url,
    webSocketImpl: impl,
    connectionParams: { authorization: `Bearer ${admin}` },
    lazy: false,
    retryAttempts: 0,
    on: { closed: () => void (state.closed = !state.disposed) },
  });
  ws.subscribe<{ jobStatusChanged: { jobId: string; status: string } }>(
    { query: `subscription($t: ID, $j: ID) { jobStatusChanged(triggerId: $t, jobId: $j) { jobId status } }`, variables: "jobId" in filter ? { j: filter.jobId } : { t: filter.triggerId } },
    {
      next: (m) => {
        const e = m.data?.jobStatusChanged;
        if (e && /^(done|failed)$/i.test(e.status)) terminal.add(e.jobId);
      },
      error: (err) => void (state.error = err),
      complete: () => {},
    },
  );
  return { terminal, state, dispose: () => ((state.disposed = true), ws.dispose()) };
}
