import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take minutes start first. Vitest orders by the durations of the last run, which a
 * fresh clone (CI) does not have, and then falls back to file size: the conformance kit's run
 * (~8 min) then started two thirds of the way through and ran alone at the end, leaving a worker
 * idle for minutes. With these first, the two workers stay busy to the end.
 */
const LONGEST_FIRST = ["test/chaos/chaos.test.ts", "test/a2a-tck/tck.test.ts", "src/jobs/journal.test.ts", "test/launcher.crash.test.ts", "test/fuzz/fuzz.test.ts"];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (s: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((f) => s.moduleId.endsWith(f));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
