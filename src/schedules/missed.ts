import type pg from "pg";
import { Schedule, ScheduleMissedFiring } from "../db/schema.js";
import { sqlNames } from "../db/names.js";

/**
 * Missed firings (schema.ts `ScheduleMissedFiring`): a firing whose job could not be created
 * within SCHEDULE_FIRING_RETRY_SECONDS (the database down) is recorded here, visibly, instead of
 * vanishing. Each schedule keeps its latest MAX_KEPT.
 */

export interface MissedFiring {
  scheduledAt: Date;
  error: string;
  recordedAt: Date;
}

const M = sqlNames(ScheduleMissedFiring);
const S = sqlNames(Schedule);
export const MAX_KEPT = 100;
const MAX_ERROR = 1000;

/** The firing's nominal time, from its key `<schedule id>-<scheduled time>` (Temporal's workflow id); else now. */
export function scheduledAtOf(scheduleId: string, firingKey: string): Date {
  const at = new Date(firingKey.startsWith(`${scheduleId}-`) ? firingKey.slice(scheduleId.length + 1) : Number.NaN);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

/**
 * Records one missed firing: once per key (a retried write changes nothing), none when the
 * schedule is gone, and the schedule's oldest beyond MAX_KEPT go in the same statement.
 */
export async function recordMissedFiring(pool: pg.Pool, scheduleId: string, firingKey: string, error: string): Promise<void> {
  await pool.query(
    `with added as (
       insert into ${M.table} (${M.firingKey}, ${M.schedule}, ${M.scheduledAt}, ${M.error}, ${M.recordedAt})
       select $2, s.${S.id}, $3, $4, now() from ${S.table} s where s.${S.id} = $1
       on conflict (${M.firingKey}) do nothing
       returning 1)
     delete from ${M.table} where ${M.schedule} = $1 and (select count(*) from added) > 0
       and ${M.firingKey} not in (select ${M.firingKey} from ${M.table} where ${M.schedule} = $1 order by ${M.scheduledAt} desc limit ${MAX_KEPT - 1})`,
    [scheduleId, firingKey, scheduledAtOf(scheduleId, firingKey), error.slice(0, MAX_ERROR)],
  );
}

/** The schedule's latest missed firings, newest first. */
export async function listMissedFirings(pool: pg.Pool, scheduleId: string, first: number): Promise<MissedFiring[]> {
  const { rows } = await pool.query<MissedFiring>(
    `select ${M.scheduledAt} as "scheduledAt", ${M.error} as error, ${M.recordedAt} as "recordedAt"
       from ${M.table} where ${M.schedule} = $1 order by ${M.scheduledAt} desc limit $2`,
    [scheduleId, first],
  );
  return rows;
}
