import { AppError } from "../errors/app-error.js";
import { SCHEDULE_OVERLAPS, type ScheduleOverlap } from "../db/schema.js";
import { isStorableText, isStorableValue } from "../infra/text.js";

/** Text PostgreSQL refuses, said the way every refusal of it is said. */
const UNSTORABLE_WHY = "must not contain NUL (\\u0000) characters or unpaired UTF-16 surrogates";

/**
 * Validation of a schedule's clock (docs/guides/schedules.md): a 5-field cron or an `every` interval, an IANA
 * time zone. Everything accepted here must be accepted by Temporal too (the create maps a
 * rejection by Temporal to the same error), so the grammar is the common core: numbers, names
 * of months and week days, `*`, ranges, steps and lists.
 */

export interface ClockSpec {
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
}

export interface ClockInput {
  cron?: string | null;
  every?: string | null;
  timezone?: string | null;
}

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const CRON_FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  { name: "day of week", min: 0, max: 6, names: DAYS },
] as const;

const MAX_EVERY_SECONDS = 366 * 24 * 3600;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

const bad = (param: string, message: string) => new AppError("validation_failed", `${param}: ${message}`, { param });

function cronValue(text: string, field: (typeof CRON_FIELDS)[number]): number | undefined {
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const names: readonly string[] | undefined = "names" in field ? field.names : undefined;
  const index = names?.indexOf(text.toUpperCase()) ?? -1;
  if (index < 0) return undefined;
  return field.name === "month" ? index + 1 : index;
}

function checkCronField(text: string, field: (typeof CRON_FIELDS)[number]): void {
  for (const item of text.split(",")) {
    const m = /^([^/-]+)(?:-([^/-]+))?(?:\/(\d{1,2}))?$/.exec(item);
    if (!m) throw bad("cron", `the ${field.name} field "${text}" is not a value, range, step or list`);
    const [, from, to, step] = m;
    if (step !== undefined && Number(step) < 1) throw bad("cron", `the ${field.name} field has a step of 0`);
    if (from === "*") {
      if (to !== undefined) throw bad("cron", `the ${field.name} field "${item}" is not a valid range`);
      continue;
    }
    const lo = cronValue(from!, field);
    const hi = to === undefined ? lo : cronValue(to, field);
    if (lo === undefined || hi === undefined || lo < field.min || hi > field.max || lo > hi) {
      throw bad("cron", `the ${field.name} field "${item}" is outside ${field.min}-${field.max}`);
    }
  }
}

/** A standard 5-field cron expression (minute hour day-of-month month day-of-week), normalised to single spaces. */
export function parseCron(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === "") throw bad("cron", "give 5 fields: minute hour day-of-month month day-of-week, e.g. \"*/5 * * * *\"");
  fields.forEach((f, i) => checkCronField(f, CRON_FIELDS[i]!));
  return fields.join(" ");
}

/** `"30s"`, `"5m"`, `"1h"`, `"1d"` (also `"1500ms"` if a whole number of seconds): whole seconds, at least `minSeconds`. */
export function parseEvery(every: string, minSeconds = 1): number {
  const m = /^\s*(\d{1,12})\s*(ms|s|m|h|d)\s*$/i.exec(every);
  if (!m) throw bad("every", 'give a number and a unit: "30s", "5m", "1h" or "1d"');
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!.toLowerCase()]!;
  if (seconds < 1) throw bad("every", "the interval must be at least 1 second");
  if (!Number.isInteger(seconds)) throw bad("every", "the interval must be a whole number of seconds");
  if (seconds < minSeconds) throw bad("every", `the interval must be at least ${minSeconds} seconds (SCHEDULE_MIN_INTERVAL_SECONDS)`);
  if (seconds > MAX_EVERY_SECONDS) throw bad("every", "the interval must be at most 366 days");
  return seconds;
}

/** An IANA time zone name, in its canonical spelling ("europe/berlin" → "Europe/Berlin"). */
export function parseTimezone(timezone: string): string {
  // Offsets ("+01:00") are accepted by Intl but not by Temporal (Go's tz database): names only.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(timezone)) throw bad("timezone", `unknown time zone "${timezone.slice(0, 64)}"; give an IANA name such as "Europe/Berlin" or "UTC"`);
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw bad("timezone", `unknown time zone "${timezone}"; give an IANA name such as "Europe/Berlin" or "UTC"`);
  }
}

/** `minIntervalSeconds`: the shortest `every` allowed (the installation's SCHEDULE_MIN_INTERVAL_SECONDS). */
export function parseClock(input: ClockInput, minIntervalSeconds = 1): ClockSpec {
  const hasCron = input.cron != null;
  const hasEvery = input.every != null;
  if (hasCron === hasEvery) throw bad(hasCron ? "every" : "cron", "give exactly one of cron and every");
  return {
    cron: hasCron ? parseCron(input.cron!) : null,
    everySeconds: hasEvery ? parseEvery(input.every!, minIntervalSeconds) : null,
    timezone: parseTimezone(input.timezone ?? "UTC"),
  };
}

/** The interval as the API shows it back: the largest whole unit ("90s" stays "90s", "3600s" is "1h"). */
export function formatEvery(seconds: number): string {
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]] as const) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

export function parseOverlap(overlap: string | null | undefined): ScheduleOverlap {
  const value = (overlap ?? "skip").toLowerCase();
  if (!(SCHEDULE_OVERLAPS as readonly string[]).includes(value)) throw bad("overlap", `must be one of ${SCHEDULE_OVERLAPS.join(", ").toUpperCase()}`);
  return value as ScheduleOverlap;
}

const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_DESCRIPTION = 1000;

/** The JSON text each firing's job gets (`{}` when none is given). */
export function parsePayload(payload: unknown): string {
  if (!isStorableValue(payload)) throw bad("payload", UNSTORABLE_WHY);
  const text = JSON.stringify(payload === undefined ? {} : payload);
  if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw bad("payload", `must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`);
  return text;
}

export function parseDescription(description: string | null | undefined): string | null {
  if (description == null || description.trim() === "") return null;
  if (description.length > MAX_DESCRIPTION) throw bad("description", `must be at most ${MAX_DESCRIPTION} characters`);
  if (!isStorableText(description)) throw bad("description", UNSTORABLE_WHY);
  return description.trim();
}
