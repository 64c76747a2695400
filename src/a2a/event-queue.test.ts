import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventQueue } from "./event-queue.js";

describe("EventQueue", () => {
  it("a consumer reads every pushed event in order, however pushes, reads and the end interleave (generated schedules)", async () => {
    // Each step: push the next event, or let the consumer read one (possibly before it was pushed).
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 40 }), fc.option(fc.string(), { nil: undefined }), async (steps, failWith) => {
        const q = new EventQueue<number>();
        const read: number[] = [];
        const reads: Promise<void>[] = [];
        const failures: unknown[] = [];
        let pushed = 0;
        const readOne = () =>
          reads.push(
            q.next().then(
              (r) => void (r.done ? undefined : read.push(r.value)),
              (err: unknown) => void failures.push(err),
            ),
          );
        for (const push of steps) {
          if (push) q.push(pushed++);
          else readOne();
          await Promise.resolve();
        }
        q.end(failWith === undefined ? undefined : { err: new Error(failWith) });
        q.push(-1); // after the end: dropped
        const rest: number[] = [];
        try {
          for await (const v of q) rest.push(v);
        } catch (err) {
          failures.push(err);
        }
        await Promise.all(reads);
        expect([...read, ...rest]).toEqual(Array.from({ length: pushed }, (_, i) => i));
        // A failure reaches exactly one read, after every event.
        expect(failures.map((e) => (e as Error).message)).toEqual(failWith === undefined ? [] : [failWith]);
        expect(q.signal.aborted).toBe(false);
        expect(await q.next()).toEqual({ value: undefined, done: true });
      }),
    );
  });

  it("the signal aborts only when the consumer leaves before the end; what was buffered is dropped and later pushes too", async () => {
    const ended = new EventQueue<number>();
    ended.push(1);
    ended.end();
    expect(await ended.next()).toEqual({ value: 1, done: false });
    await ended.return();
    expect(ended.signal.aborted).toBe(false);

    const left = new EventQueue<number>();
    left.push(1);
    const waiting = new EventQueue<number>();
    const pending = waiting.next();
    for (const q of [left, waiting]) {
      await q.return();
      expect(q.signal.aborted).toBe(true);
      q.push(2);
      expect(await q.next()).toEqual({ value: undefined, done: true });
    }
    expect(await pending).toEqual({ value: undefined, done: true });
  });
});
