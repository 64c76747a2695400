import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { Account } from "./accounts.js";
import { Job } from "./jobs.js";
import { Trigger } from "./triggers.js";

/** The outbound delivery engine's deliveries and attempts (src/outbound). */

/** What an outbound delivery carries (docs/guides/webhooks.md): a job's completion callback, a trigger's test event, an A2A push, a job's input request (`job.input_required`). */
export const DELIVERY_KINDS = ["job_callback", "test_callback", "a2a_push", "job_input"] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One delivery cycle of one outbound message (the `deliver` workflow's id is this row's id). A
 * redelivery is a new cycle with the same `webhookId`. Inserted in the transaction that commits
 * the event (a job's terminal transition), started on Temporal by the delivery dispatcher.
 */
export const Delivery = defineEntity({
  name: "Delivery",
  tableName: "deliveries",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade"),
    job: () => p.manyToOne(Job).deleteRule("cascade").nullable().index(),
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade").nullable(),
    kind: p.enum(DELIVERY_KINDS),
    /** `webhook-id`: the same on every attempt and every redelivery of the message. */
    webhookId: p.string().length(100),
    /** The request body, byte for byte the same on every attempt and redelivery; null: built from the job when first sent. */
    body: p.text().nullable(),
    /** A2A push: the push notification config the event goes to. */
    target: p.string().length(255).nullable(),
    /** A2A push: the task state the event reports (working, completed, failed, canceled). */
    event: p.string().length(40).nullable(),
    status: p.enum(DELIVERY_STATUSES).default("pending"),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    finishedAt: p.datetime().nullable(),
    /** When the `deliver` workflow was started; null rows are picked up by the delivery dispatcher. */
    dispatchedAt: p.datetime().nullable(),
    dispatchLeaseUntil: p.datetime().nullable(),
    traceContext: p.string().length(64).nullable(),
    /** While an attempt holds one of its account's outbound slots (OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT): until when, at the latest. */
    attemptLeaseUntil: p.datetime().nullable(),
  },
  indexes: [
    { name: "deliveries_undispatched_idx", properties: ["createdAt"], where: { dispatchedAt: null } },
    // The stuck-delivery sweep reads the pending rows only.
    { name: "deliveries_pending_idx", properties: ["dispatchedAt"], where: { status: "pending" } },
    // An account's attempts in flight, counted before each attempt.
    { name: "deliveries_attempt_lease_idx", properties: ["account", "attemptLeaseUntil"], where: { attemptLeaseUntil: { $ne: null } } },
  ],
});
export type IDelivery = InferEntity<typeof Delivery>;

/** One HTTP attempt of a delivery: what the receiver answered, or why there was no answer. */
export const DeliveryAttempt = defineEntity({
  name: "DeliveryAttempt",
  tableName: "delivery_attempts",
  properties: {
    delivery: () => p.manyToOne(Delivery).deleteRule("cascade").primary(),
    attempt: p.integer().primary(),
    at: p.datetime(),
    url: p.text(),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    error: p.text().nullable(),
    /** Bytes of the response body read (the read stops at OUTBOUND_MAX_RESPONSE_BYTES). */
    responseBytes: p.integer().default(0),
    /** The start of the response body, for the delivery log. */
    responseExcerpt: p.text().nullable(),
  },
  primaryKeys: ["delivery", "attempt"],
});
export type IDeliveryAttempt = InferEntity<typeof DeliveryAttempt>;
