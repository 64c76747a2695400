/**
 * The time source for secret grace windows and signature timestamps. Tests move it to check
 * the 24-hour rotation grace without waiting; production never touches it.
 */
export const clock = {
  now: (): number => Date.now(),
};

export const GRACE_MS = 24 * 60 * 60 * 1000;
