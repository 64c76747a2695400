import type { EntityManager } from "@mikro-orm/postgresql";
import { AppError } from "../errors/app-error.js";
import { Account, Agent, Schedule, type IAgent, type ISchedule } from "../db/schema.js";
import { newId } from "../infra/ids.js";
import type { Runtime } from "../runtime/runtime.js";
import { createClock, deleteClock, setClockPaused } from "./clock.js";
import { parseClock, parseDescription, parseOverlap, parsePayload, type ClockInput } from "./spec.js";

/**
 * Schedules (docs/guides/schedules.md): the row in PostgreSQL is what the API lists and what each firing checks;
 * the Temporal Schedule of the same id is the clock. Consistency rules:
 * - create: row first, then the clock; if Temporal refuses or is down the row is removed again
 *   and the caller gets the error (no schedule that exists on one side only);
 * - pause/resume/delete: the clock first, then the row; Temporal down = 503, nothing changed;
 *   a clock Temporal no longer has is created again from the row by pause/resume;
 * - a firing whose row is gone (agent or account deleted while Temporal was down) creates no job
 *   and deletes its clock (agent-jobs/scheduled-run.ts); a firing of a paused row creates none.
 */

export interface ScheduleFields extends ClockInput {
  payload?: unknown;
  overlap?: string | null;
  description?: string | null;
}

export async function listSchedules(em: EntityManager, accountId: string, agentId: string): Promise<ISchedule[]> {
  return em.find(Schedule, { account: accountId, agent: agentId }, { orderBy: { createdAt: "asc", id: "asc" } });
}

/** A foreign schedule id answers exactly like a missing one. */
export async function findSchedule(em: EntityManager, accountId: string, id: string): Promise<ISchedule | null> {
  return em.findOne(Schedule, { id, account: accountId });
}

export async function requireSchedule(em: EntityManager, accountId: string, id: string): Promise<ISchedule> {
  const schedule = await findSchedule(em, accountId, id);
  if (!schedule) throw new AppError("not_found", `Schedule ${id} not found`);
  return schedule;
}

/** Advisory lock class of schedule creates (jobs/store.ts uses 7301 for run starts). */
const SCHEDULE_CREATE_LOCK = 7302;

export async function createSchedule(runtime: Runtime, em: EntityManager, accountId: string, agent: Pick<IAgent, "id" | "script">, fields: ScheduleFields): Promise<ISchedule> {
  if (!agent.script) throw new AppError("validation_failed", "agentId: only automation agents (agents with a script) can run on a schedule", { param: "agentId" });
  const { perAccount, minIntervalSeconds } = runtime.config.schedules;
  const clock = parseClock(fields, minIntervalSeconds);
  const overlap = parseOverlap(fields.overlap);
  const payload = JSON.parse(parsePayload(fields.payload)) as unknown;
  const schedule = await em.transactional(async (tx) => {
    // Creates of one account one at a time (accounts never wait for each other), so the count
    // below sees every schedule committed before: concurrent creates cannot pass the limit.
    await tx.execute("select pg_advisory_xact_lock(?, hashtext(?))", [SCHEDULE_CREATE_LOCK, accountId]);
    if ((await tx.count(Schedule, { account: accountId })) >= perAccount) {
      throw new AppError("validation_failed", `agentId: this account already has ${perAccount} schedules, the most allowed (SCHEDULES_PER_ACCOUNT); delete one first`, {
        param: "agentId",
        details: { limit: perAccount },
      });
    }
    return tx.create(Schedule, {
      id: newId("sch"),
      account: tx.getReference(Account, accountId),
      agent: tx.getReference(Agent, agent.id),
      ...clock,
      payload,
      overlap,
      description: parseDescription(fields.description),
      paused: false,
    });
  });
  try {
    await createClock(runtime, schedule.id, clock, overlap, false);
  } catch (err) {
    await em.nativeDelete(Schedule, { id: schedule.id });
    throw err;
  }
  return schedule;
}

export async function setSchedulePaused(runtime: Runtime, em: EntityManager, accountId: string, id: string, paused: boolean): Promise<ISchedule> {
  const schedule = await requireSchedule(em, accountId, id);
  // Temporal lost the schedule (its data was reset): the row is the truth, the clock is made again.
  if (!(await setClockPaused(runtime, id, paused))) {
    await createClock(runtime, id, { cron: schedule.cron ?? null, everySeconds: schedule.everySeconds ?? null, timezone: schedule.timezone }, schedule.overlap, paused);
  }
  schedule.paused = paused;
  await em.flush();
  return schedule;
}

export async function deleteSchedule(runtime: Runtime, em: EntityManager, accountId: string, id: string): Promise<boolean> {
  await requireSchedule(em, accountId, id);
  await deleteClock(runtime, id);
  return (await em.nativeDelete(Schedule, { id, account: accountId })) > 0;
}

/**
 * Stops the clocks of an agent about to be deleted (its rows go with it by cascade). Temporal
 * down must not keep an agent from being deleted: a clock left behind fires into a missing row,
 * which creates no job and deletes that clock.
 */
export async function deleteAgentClocks(runtime: Runtime, em: EntityManager, accountId: string, agentId: string): Promise<void> {
  const schedules = await em.find(Schedule, { account: accountId, agent: agentId }, { fields: ["id"] });
  for (const { id } of schedules) {
    await deleteClock(runtime, id).catch((err) => runtime.log.warn({ err: String(err), scheduleId: id }, "could not delete the schedule's clock; its next firing will"));
  }
}

/** What a firing needs; null when the schedule, its agent or its account is gone. */
export async function firingTarget(em: EntityManager, scheduleId: string): Promise<{ schedule: ISchedule; automation: boolean } | null> {
  const schedule = await em.findOne(Schedule, { id: scheduleId }, { populate: ["agent"] });
  if (!schedule) return null;
  return { schedule, automation: Boolean(schedule.agent.script) };
}
