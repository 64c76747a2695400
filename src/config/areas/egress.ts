import { z } from "zod";
import { area, variable } from "../variable.js";
import { bool, jsonRecord } from "../values.js";

/** The configuration variables of the area "Egress (ctx.fetch)". */
export const egressArea = area("Egress (ctx.fetch)", "What a script's `ctx.fetch` (and an OAuth client's metadata document fetch) may reach.", {
  EGRESS_ALLOW_PRIVATE: variable(bool.optional(), "Dev and tests only: `ctx.fetch` may reach loopback/private addresses (and an OAuth client's `http://` loopback Client ID Metadata Document is accepted); refused in production", "`false` (`npm start` on loopback: `true`)"),
  EGRESS_ALLOW_ADDRESSES: variable(z.string().trim().optional(), "Comma list of addresses/CIDRs `ctx.fetch` may reach despite being private (an internal API)"),
  EGRESS_RESOLVE: variable(jsonRecord(z.string().min(1), '{"api.test":"127.0.0.2"}').optional(), "JSON `{\"host\":\"address\"}` answers used instead of DNS for `ctx.fetch` (tests, dev; like curl `--resolve`)"),
  EGRESS_CA_FILE: variable(z.string().trim().min(1).optional(), "PEM of extra CAs `ctx.fetch` trusts besides the system roots"),
  EGRESS_TIMEOUT_MS: variable(z.coerce.number().int().min(100).max(600_000).default(30_000), "Whole-call deadline of one `ctx.fetch`, redirects included"),
  EGRESS_MAX_RESPONSE_BYTES: variable(z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024), "Largest `ctx.fetch` response body"),
  EGRESS_MAX_REDIRECTS: variable(z.coerce.number().int().min(0).max(20).default(5), "Redirects `ctx.fetch` follows"),
});
