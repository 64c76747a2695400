import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";
import { agentOwned } from "./agent-owned.js";

/** Triggers and their inbound and callback secrets (src/triggers). */

export const Trigger = defineEntity({
  name: "Trigger",
  tableName: "triggers",
  properties: {
    ...agentOwned(),
    description: p.text().nullable(),
    active: p.boolean().default(true),
    secretRequired: p.boolean().default(true),
    /** Where a finished job's `job.done` / `job.failed` event is POSTed (docs/guides/webhooks.md); null: no callback. */
    callbackUrl: p.text().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(now).onUpdate(now),
  },
});
export type ITrigger = InferEntity<typeof Trigger>;

export const TriggerSecret = defineEntity({
  name: "TriggerSecret",
  tableName: "trigger_secrets",
  properties: {
    id: p.string().primary(),
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade"),
    /** AES-256-GCM sealed secret (infra/crypto.ts), so owners can copy it later. */
    sealedSecret: p.text(),
    /** Null for the current secret; the end of the grace window for a rotated-out one. */
    expiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [{ properties: ["trigger", "expiresAt"] }],
});
export type ITriggerSecret = InferEntity<typeof TriggerSecret>;

/** The secrets a trigger signs its completion callbacks with: kept like its inbound secrets (same shape, same 24-hour grace). */
export const TriggerCallbackSecret = defineEntity({
  name: "TriggerCallbackSecret",
  tableName: "trigger_callback_secrets",
  properties: {
    id: p.string().primary(),
    trigger: () => p.manyToOne(Trigger).deleteRule("cascade"),
    sealedSecret: p.text(),
    expiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  indexes: [{ properties: ["trigger", "expiresAt"] }],
});
export type ITriggerCallbackSecret = InferEntity<typeof TriggerCallbackSecret>;
