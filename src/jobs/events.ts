import { createPubSub, filter, pipe } from "@graphql-yoga/subscription";
import { JOB_STATUS, type JobStatusEvent, type JobStatusNotice } from "./store.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * Job status events for GraphQL subscribers of one API instance. Every instance LISTENs on the
 * `job_status` channel, so a transition written by any worker reaches subscribers everywhere. The
 * notice carries no error text (NOTIFY payloads are small); a failed job's error is read here.
 */
type Hub = ReturnType<typeof createPubSub<{ job: [JobStatusEvent] }>>;
const hubs = new WeakMap<Runtime, Hub>();

function hub(runtime: Runtime): Hub {
  let h = hubs.get(runtime);
  if (!h) {
    const created = createPubSub<{ job: [JobStatusEvent] }>();
    h = created;
    hubs.set(runtime, created);
    void runtime.events
      .subscribe(JOB_STATUS, (payload) => {
        let notice: JobStatusNotice;
        try {
          notice = JSON.parse(payload) as JobStatusNotice;
        } catch {
          return; // not ours
        }
        if (notice.status !== "failed") return created.publish("job", { ...notice, error: null });
        runtime.pool
          .query<{ error: string | null }>("select error from jobs where id = $1", [notice.jobId])
          .then(
            ({ rows }) => rows[0]?.error ?? null,
            () => null,
          )
          .then((error) => created.publish("job", { ...notice, error }));
      })
      .catch((err) => runtime.log.warn({ err }, "could not listen for job status events"));
  }
  return h;
}

/** Starts listening now, so events are not missed between a mutation and a first subscriber. */
export function ensureJobEvents(runtime: Runtime): void {
  hub(runtime);
}

export function jobEvents(
  runtime: Runtime,
  accountId: string,
  match: { jobId?: string | null; triggerId?: string | null; agentId?: string | null },
): AsyncIterable<JobStatusEvent> {
  return pipe(
    hub(runtime).subscribe("job"),
    filter(
      (e: JobStatusEvent) =>
        e.accountId === accountId &&
        (!match.jobId || e.jobId === match.jobId) &&
        (!match.triggerId || e.triggerId === match.triggerId) &&
        (!match.agentId || e.agentId === match.agentId),
    ),
  );
}
