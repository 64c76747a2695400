import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { now } from "./columns.js";

/** Accounts and who may act for one: balances, admin tokens. */

export const Account = defineEntity({
  name: "Account",
  tableName: "accounts",
  properties: {
    id: p.string().primary(),
    name: p.string().length(200),
    balanceMicros: p.bigint("number").default(0),
    retentionDays: p.integer().default(30),
    relaxSignatureTimestamp: p.boolean().default(false),
    defaultRateLimitPerMinute: p.integer().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
  // The last line of defence for "the balance never goes below zero": holds are conditional
  // updates, and this makes any bug in them fail loudly instead of overdrawing.
  checks: [{ name: "accounts_balance_non_negative", expression: "balance_micros >= 0" }],
});
export type IAccount = InferEntity<typeof Account>;

export const AdminToken = defineEntity({
  name: "AdminToken",
  tableName: "admin_tokens",
  properties: {
    id: p.string().primary(),
    account: () => p.manyToOne(Account).deleteRule("cascade").index(),
    tokenHash: p.string().length(64).unique(),
    prefix: p.string().length(16),
    name: p.string().length(200).default(""),
    /** Updated at most about once a minute per token (no write per request). */
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(now).defaultRaw("now()"),
  },
});
export type IAdminToken = InferEntity<typeof AdminToken>;
