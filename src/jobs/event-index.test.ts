import { describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { SubscriberIndex, type EventMatch } from "./event-index.js";
import type { JobStatusEvent } from "./store.js";

const event = (accountId: string, jobId: string, extra: Partial<JobStatusEvent> = {}): JobStatusEvent => ({
  jobId,
  accountId,
  agentId: "agt_1",
  triggerId: "trg_1",
  status: "running",
  attempts: 1,
  error: null,
  at: new Date(0).toISOString(),
  ...extra,
});

/** A match whose fields count every read: the "filter machinery" of one subscription. */
function spiedMatch(m: EventMatch): { match: EventMatch; reads: () => number } {
  let reads = 0;
  const match = {} as EventMatch;
  for (const k of ["jobId", "triggerId", "agentId"] as const) {
    Object.defineProperty(match, k, { enumerable: true, get: () => (reads++, m[k]) });
  }
  return { match, reads: () => reads };
}

describe("job status subscribers, indexed by account and job", () => {
  it("events of account A never run account B's filters nor reach its subscribers", () => {
    const index = new SubscriberIndex();
    const bAll = vi.fn();
    const bTrigger = vi.fn();
    const aAll = vi.fn();
    const spies = [spiedMatch({}), spiedMatch({ triggerId: "trg_1" }), spiedMatch({ jobId: "job_1" })];
    index.add("acc_B", spies[0]!.match, bAll);
    index.add("acc_B", spies[1]!.match, bTrigger);
    index.add("acc_B", spies[2]!.match, bAll);
    const readsAfterAdd = spies.map((s) => s.reads()); // registration may read jobId
    index.add("acc_A", {}, aAll);
    for (let i = 0; i < 1000; i++) index.publish(event("acc_A", i % 2 ? "job_1" : `job_${i}`));
    expect(aAll).toHaveBeenCalledTimes(1000);
    expect(bAll).not.toHaveBeenCalled();
    expect(bTrigger).not.toHaveBeenCalled();
    expect(spies.map((s) => s.reads())).toEqual(readsAfterAdd);
  });

  it("delivers exactly what the old filter delivered: account, then job, trigger and agent (generated subscribers and events)", () => {
    const id = fc.constantFrom("1", "2", "3");
    const match = fc.record({ jobId: fc.option(id), triggerId: fc.option(id), agentId: fc.option(id) });
    fc.assert(
      fc.property(fc.array(fc.tuple(id, match), { maxLength: 8 }), fc.array(fc.tuple(id, id, id, id), { maxLength: 20 }), (subs, events) => {
        const index = new SubscriberIndex();
        const got = subs.map(() => [] as JobStatusEvent[]);
        const removers = subs.map(([acc, m], i) => index.add(acc, m, (e) => got[i]!.push(e)));
        const sent = events.map(([acc, job, trig, agent]) => event(acc, job, { triggerId: trig, agentId: agent }));
        sent.forEach((e) => index.publish(e));
        subs.forEach(([acc, m], i) => {
          const expected = sent.filter((e) => e.accountId === acc && (!m.jobId || e.jobId === m.jobId) && (!m.triggerId || e.triggerId === m.triggerId) && (!m.agentId || e.agentId === m.agentId));
          expect(got[i]).toEqual(expected);
        });
        removers.forEach((r) => r());
        expect(index.accountCount()).toBe(0);
      }),
    );
  });
});
