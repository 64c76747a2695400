import { jobsApi } from "./jobs";
import { isSocketUp, onSocketState, subscribeJobs } from "./socket";
import type { Job } from "./types";

/** Follows one job to its end: live over graphql-ws, polling `job(id)` whenever the socket is down. */
export function followJob(jobId: string, onUpdate: (job: Job) => void, onError: (e: Error) => void): () => void {
  let stopped = false;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let inFlight = false;
  const final = (j: Job) => j.status === "DONE" || j.status === "FAILED";
  const stop = () => {
    stopped = true;
    clearTimeout(pollTimer);
    unsubscribe();
    offSocket();
  };
  const refresh = async () => {
    if (stopped || inFlight) return;
    inFlight = true;
    try {
      const job = await jobsApi.job(jobId);
      if (stopped || !job) return;
      onUpdate(job);
      if (final(job)) stop();
    } catch (e) {
      if (!stopped) onError(e as Error);
    } finally {
      inFlight = false;
    }
  };
  // Poll fast while the socket is down, slowly (a safety net) while it is up.
  const schedule = () => {
    if (stopped) return;
    pollTimer = setTimeout(
      async () => {
        await refresh();
        schedule();
      },
      isSocketUp() ? 5000 : 1000,
    );
  };
  const unsubscribe = subscribeJobs({ jobId }, () => void refresh(), () => undefined);
  const offSocket = onSocketState((up) => {
    if (up) void refresh(); // catch up on anything missed while connecting
  });
  void refresh();
  schedule();
  return stop;
}
