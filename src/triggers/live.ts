import { createPubSub, filter, pipe } from "@graphql-yoga/subscription";
import { JOB_STATUS, jobEventsSince, type JobStatusEvent } from "../jobs/store.js";
import type { Runtime } from "../runtime/runtime.js";

/**
 * Job status events for GraphQL subscribers of one API instance. Every instance LISTENs on the
 * `job_status` channel, so a transition written by any worker reaches subscribers everywhere.
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
        try {
          created.publish("job", JSON.parse(payload) as JobStatusEvent);
        } catch {
          /* not ours */
        }
      })
      .catch((err) => runtime.log.warn({ err }, "could not listen for job status events"));
    // Transitions committed while the listener was reconnecting sent NOTIFYs nobody heard:
    // replay the current state of what changed (a subscriber may see an event twice, never miss one).
    runtime.events.onReconnect((since) => {
      jobEventsSince(runtime.pool, new Date(since.getTime() - 2000))
        .then((events) => events.forEach((e) => created.publish("job", e)))
        .catch((err) => runtime.log.warn({ err }, "could not replay job status events after a reconnect"));
    });
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
