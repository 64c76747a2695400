import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";
import { Job } from "./jobs.js";

/** A run's questions to a person (src/input-requests). */

export const INPUT_REQUEST_STATUSES = ["pending", "answered", "timed_out"] as const;
export type InputRequestStatus = (typeof INPUT_REQUEST_STATUSES)[number];

/**
 * A run's question to a person (`ctx.ask`, docs/design/input-requests.md, src/input-requests/): one row per ask of a
 * job, keyed like a journaled step by its position in the run. Answered at most once.
 */
export const InputRequest = defineEntity({
  name: "InputRequest",
  tableName: "input_requests",
  properties: {
    id: p.string().primary(),
    job: () => p.manyToOne(Job).deleteRule("cascade"),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    /** The ask's journal key (`<seq>:ask`): the same on every re-run of the script. */
    stepKey: p.string().length(200),
    /** Emptied by the retention purge (a prompt often quotes the payload). */
    prompt: p.text(),
    schema: p.json<unknown>().nullable(),
    status: p.enum(INPUT_REQUEST_STATUSES).default("pending"),
    answer: p.json<unknown>().nullable(),
    /** sha256 of the answer URL's token (the token itself is derived, never stored). */
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    answeredAt: p.datetime().nullable(),
    /** graphql or answer_url. */
    answeredVia: p.string().length(20).nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  uniques: [{ name: "input_requests_job_step_key_unique", properties: ["job", "stepKey"] }],
});
export type IInputRequest = InferEntity<typeof InputRequest>;
