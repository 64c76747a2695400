import { gql } from "./webhooks.js";

/** Test helpers for runs that ask (ctx.ask, src/input-requests/). */

/**
 * A script that asks twice: a flat form (`ok`, `note`) offered to MCP clients as it is, then an
 * array (`items`) no form can draw, offered as one JSON text field.
 */
export const TWO_QUESTIONS_SCRIPT = `export default async function run(input, ctx) {
  const a = await ctx.ask({ prompt: "Approve order " + input.n + "?", schema: { type: "object", properties: { ok: { type: "boolean" }, note: { type: "string" } }, required: ["ok"] } });
  const b = await ctx.ask({ prompt: "Which items?", schema: { type: "object", properties: { items: { type: "array", items: { type: "string" }, minItems: 1 } }, required: ["items"] } });
  return { ok: a.ok, note: a.note ?? null, items: b.items };
}`;

export const JOB_Q = `query($id: ID!) { job(id: $id) { id status result error inputRequest { id prompt schema expiresAt } } }`;

export async function jobOf(url: string, token: string, id: string): Promise<any> {
  const r = await gql(url, token, JOB_Q, { id });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.job;
}

/** Polls `job(id)` until its status is one of `statuses`. */
export async function waitForStatus(url: string, token: string, id: string, statuses: string[], timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await jobOf(url, token, id);
    if (statuses.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} is ${job.status}, not ${statuses.join("|")}: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function answerByGraphql(url: string, token: string, jobId: string, value: unknown) {
  return gql(url, token, `mutation($j: ID!, $v: JSON!) { answerJobInput(jobId: $j, value: $v) { id status } }`, { j: jobId, v: value });
}

/** POSTs `body` (raw text) to an answer URL; the status and the parsed body. */
export async function postAnswer(answerUrl: string, body: string, contentType = "application/json"): Promise<{ status: number; body: any }> {
  const res = await fetch(answerUrl, { method: "POST", headers: { "content-type": contentType }, body });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}
