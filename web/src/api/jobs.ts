import { gql } from "./client";
import type { Job } from "./types";

export const JOB_FIELDS = `id status triggerId agentId threadId result error attempts cost logs createdAt startedAt finishedAt`;

export const jobsApi = {
  job: (id: string) => gql<{ job: Job | null }>(`query($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`, { id }).then((d) => d.job),
};
