import { createClient, type Client } from "graphql-ws";
import { getToken } from "./token";
import type { JobStatusEvent } from "./types";

/** One graphql-ws connection per signed-in token; pages subscribe through it and see its state. */

let socket: Client | undefined;
let socketToken: string | undefined;
const socketListeners = new Set<(up: boolean) => void>();
let socketUp = false;

export function closeSocket(): void {
  socket?.dispose();
  socket = undefined;
  socketToken = undefined;
}

function setUp(up: boolean) {
  socketUp = up;
  socketListeners.forEach((fn) => fn(up));
}
export const isSocketUp = () => socketUp;
export function onSocketState(fn: (up: boolean) => void): () => void {
  socketListeners.add(fn);
  return () => socketListeners.delete(fn);
}

function client(): Client {
  const token = getToken() ?? "";
  if (socket && socketToken === token) return socket;
  closeSocket();
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  socketToken = token;
  socket = createClient({
    url,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** n, 10_000))),
    on: { connected: () => setUp(true), closed: () => setUp(false), error: () => setUp(false) },
  });
  return socket;
}

/** Subscribes to jobStatusChanged; returns an unsubscribe function. */
export function subscribeJobs(
  filter: { jobId?: string; triggerId?: string; agentId?: string },
  onEvent: (e: JobStatusEvent) => void,
  onDrop?: () => void,
): () => void {
  return client().subscribe<{ jobStatusChanged: JobStatusEvent }>(
    {
      query: `subscription($jobId: ID, $triggerId: ID, $agentId: ID) {
        jobStatusChanged(jobId: $jobId, triggerId: $triggerId, agentId: $agentId) { jobId status error triggerId agentId at }
      }`,
      variables: filter,
    },
    {
      next: (v) => v.data && onEvent(v.data.jobStatusChanged),
      error: () => onDrop?.(),
      complete: () => {},
    },
  );
}
