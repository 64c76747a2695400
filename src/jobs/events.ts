import { Repeater } from "@graphql-yoga/subscription";
import { getJob, JOB_STATUS, jobEventsSince, type JobStatusEvent, type JobStatusNotice } from "./store.js";
import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";
import { SubscriberIndex, type EventMatch } from "./event-index.js";

/**
 * Job status events for GraphQL subscribers of one API instance. Every instance LISTENs on the
 * `job_status` channel, so a transition written by any worker reaches subscribers everywhere. The
 * notice carries no error text (NOTIFY payloads are small); a failed job's error is read here.
 * Subscribers are indexed by account and job (event-index.ts): an event is matched only against
 * its own account's subscribers.
 */
const hub = perRuntime(
  () => new SubscriberIndex(),
  (created, runtime) => {
    void runtime.events
      .subscribe(JOB_STATUS, (payload) => {
        let notice: JobStatusNotice;
        try {
          notice = JSON.parse(payload) as JobStatusNotice;
        } catch {
          return; // not ours
        }
        if (notice.status !== "failed") return created.publish({ ...notice, error: null });
        runtime.pool
          .query<{ error: string | null }>("select error from jobs where id = $1", [notice.jobId])
          .then(
            ({ rows }) => rows[0]?.error ?? null,
            () => null,
          )
          .then((error) => created.publish({ ...notice, error }));
      })
      .catch((err) => runtime.log.warn({ err }, "could not listen for job status events"));
    // Transitions committed while the listener was reconnecting sent NOTIFYs nobody heard:
    // replay the current state of what changed (a subscriber may see an event twice, never miss one).
    runtime.events.onReconnect((since) => {
      jobEventsSince(runtime.pool, new Date(since.getTime() - 2000))
        .then((events) => events.forEach((e) => created.publish(e)))
        .catch((err) => runtime.log.warn({ err }, "could not replay job status events after a reconnect"));
    });
  },
);

/** Starts listening now, so events are not missed between a mutation and a first subscriber. */
export function ensureJobEvents(runtime: Runtime): void {
  hub(runtime);
}

export function jobEvents(runtime: Runtime, accountId: string, match: EventMatch): AsyncIterable<JobStatusEvent> {
  const index = hub(runtime);
  // Registered when the iterator is first pulled, synchronously (withCurrentState relies on it).
  const live = new Repeater<JobStatusEvent>(async (push, stop) => {
    const remove = index.add(accountId, match, (e) => {
      try {
        void push(e);
      } catch (err) {
        void stop(err); // a consumer 1024 events behind (Repeater's bound) ends with an error; others are unaffected
      }
    });
    await stop;
    remove();
  });
  return match.jobId ? withCurrentState(runtime, accountId, match.jobId, live) : live;
}

const RANK = { queued: 0, running: 1, input_required: 1, done: 2, failed: 2 } as const;

/**
 * Whether `e` is already covered by `current` (older or the same). Statuses only move forward,
 * except around a pause for input (ctx.ask): running → input_required → queued → running again.
 */
function coveredBy(e: JobStatusEvent, current: JobStatusEvent | undefined): boolean {
  if (!current) return false;
  if (e.status === "input_required") return current.status === "input_required" || RANK[current.status] === 2;
  if (current.status === "input_required") return e.status !== "queued" && RANK[e.status] !== 2;
  return RANK[e.status] < RANK[current.status] || (RANK[e.status] === RANK[current.status] && (RANK[e.status] === 2 || e.attempts <= current.attempts));
}

/**
 * One job's events, its current state first, so a subscriber that comes late still sees the end.
 * It listens before it reads the job, then drops what the read already covers: nothing falls in
 * the gap between the two, and nothing arrives twice or out of order.
 */
function withCurrentState(runtime: Runtime, accountId: string, jobId: string, live: AsyncIterable<JobStatusEvent>): AsyncIterable<JobStatusEvent> {
  return new Repeater<JobStatusEvent>(async (push, stop) => {
    const events = live[Symbol.asyncIterator]();
    let current: JobStatusEvent | undefined;
    let read = false;
    const early: JobStatusEvent[] = [];
    const covered = (e: JobStatusEvent) => coveredBy(e, current);
    const forward = (async () => {
      for (;;) {
        const next = await Promise.race([events.next(), stop.then(() => ({ done: true as const, value: undefined }))]);
        if (next.done) return;
        if (!read) early.push(next.value);
        else if (!covered(next.value)) {
          current = next.value;
          await push(next.value);
        }
      }
    })();
    const job = await getJob(runtime.pool, jobId).catch(() => undefined);
    if (job && job.accountId === accountId) {
      current = {
        jobId,
        accountId,
        agentId: job.agentId,
        triggerId: job.triggerId,
        status: job.status,
        error: job.error,
        attempts: job.attempts,
        at: (job.finishedAt ?? job.startedAt ?? job.createdAt).toISOString(),
      };
      await push(current);
    }
    // Synchronously (pushes queue in order), so no live event can overtake the early ones.
    for (const e of early.splice(0)) {
      if (covered(e)) continue;
      current = e;
      void push(e);
    }
    read = true;
    await stop;
    await events.return?.();
    await forward;
  });
}
