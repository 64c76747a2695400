import { gql } from "./client";
import type { Job, Schedule } from "./types";

const SCHEDULE_FIELDS = `id agentId cron every timezone paused description overlap payload createdAt
  nextRunTimes(first: 3) recentJobs(first: 5) { id status createdAt }`;

export const schedulesApi = {
  schedules: (agentId: string) =>
    gql<{ agent: { schedules: Schedule[] } | null }>(`query($id: ID!) { agent(id: $id) { schedules { ${SCHEDULE_FIELDS} } } }`, { id: agentId }).then((d) => d.agent?.schedules ?? []),
  createSchedule: (input: Record<string, unknown>) =>
    gql<{ createSchedule: Schedule }>(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { ${SCHEDULE_FIELDS} } }`, { i: input }).then((d) => d.createSchedule),
  pauseSchedule: (id: string) => gql<{ pauseSchedule: Schedule }>(`mutation($id: ID!) { pauseSchedule(id: $id) { ${SCHEDULE_FIELDS} } }`, { id }).then((d) => d.pauseSchedule),
  resumeSchedule: (id: string) => gql<{ resumeSchedule: Schedule }>(`mutation($id: ID!) { resumeSchedule(id: $id) { ${SCHEDULE_FIELDS} } }`, { id }).then((d) => d.resumeSchedule),
  deleteSchedule: (id: string) => gql<{ deleteSchedule: boolean }>(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id }),
  runScheduleNow: (id: string) => gql<{ runScheduleNow: Pick<Job, "id" | "status"> }>(`mutation($id: ID!) { runScheduleNow(id: $id) { id status } }`, { id }).then((d) => d.runScheduleNow),
};
