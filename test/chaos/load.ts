import { isReply, type HttpsClient, type Outcome } from "./client.js";

/**
 * Bounded, sustained load through the balancer, and the tally of everything clients saw.
 * Webhooks retry (same Idempotency-Key) on 503, on a reset connection and on the balancer's own
 * 502/504 (a request that was in flight on a killed instance), as a careful client would; chat
 * requests are not retried (they are not idempotent), only counted.
 */
export interface Tally {
  requests: number;
  byStatus: Record<string, number>;
  /** 503s without Retry-After: must stay 0. */
  unavailableWithoutRetryAfter: number;
  /** Connection-level failures (reset, refused, timeout) by code. */
  failures: Record<string, number>;
  /** The balancer's own 502/504: the instance died with the request in flight. */
  balancerErrors: number;
  /** Any 500 (or other unexpected 5xx from the service), with a sample body. */
  serverErrors: { status: number; body: string }[];
}

export const newTally = (): Tally => ({ requests: 0, byStatus: {}, unavailableWithoutRetryAfter: 0, failures: {}, balancerErrors: 0, serverErrors: [] });

export type Kind = "ok" | "unavailable" | "in-flight" | "unexpected";

/** Counts one outcome in the tally and says what it means for the client: done, retry later, retry (it may have been applied), or a fault of the service. */
export function record(t: Tally, o: Outcome, expected: number[]): Kind {
  t.requests++;
  if (!isReply(o)) {
    t.failures[o.failure] = (t.failures[o.failure] ?? 0) + 1;
    return "in-flight";
  }
  t.byStatus[o.status] = (t.byStatus[o.status] ?? 0) + 1;
  if (expected.includes(o.status)) return "ok";
  if (o.status === 503) {
    if (!o.headers["retry-after"]) t.unavailableWithoutRetryAfter++;
    return "unavailable";
  }
  // HAProxy's own error pages are HTML; the service always answers JSON.
  if ((o.status === 502 || o.status === 504) && String(o.headers["content-type"] ?? "").includes("text/html")) {
    t.balancerErrors++;
    return "in-flight";
  }
  if (o.status >= 500) t.serverErrors.push({ status: o.status, body: o.text.slice(0, 300) });
  return "unexpected";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WebhookLoad {
  tally: Tally;
  /** Idempotency key → the job id(s) the service answered with (more than one = a duplicate). */
  accepted: Map<string, { n: number; jobIds: Set<string> }>;
  /** Logical requests never accepted (gave up after many attempts) or refused with a 4xx. */
  notAccepted: { key: string; last: string }[];
}

export function webhookLoad(client: HttpsClient, apiUrl: string, triggerId: string, secret: string): WebhookLoad & { run(stop: () => boolean, concurrency: number, pauseMs: number): Promise<void> } {
  const load: WebhookLoad = { tally: newTally(), accepted: new Map(), notAccepted: [] };
  let seq = 0;
  const one = async (n: number) => {
    const key = `chaos-${n}`;
    const body = JSON.stringify({ n });
    for (let attempt = 1; ; attempt++) {
      const o = await client.send(`${apiUrl}/api/triggers/${triggerId}/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-trigger-secret": secret, "idempotency-key": key },
        body,
      });
      const kind = record(load.tally, o, [202]);
      if (kind === "ok" && isReply(o)) {
        const entry = load.accepted.get(key) ?? { n, jobIds: new Set<string>() };
        entry.jobIds.add(o.json().job_id);
        load.accepted.set(key, entry);
        return;
      }
      if (kind === "unexpected" || attempt >= 300) {
        load.notAccepted.push({ key, last: isReply(o) ? `${o.status} ${o.text.slice(0, 200)}` : o.failure });
        return;
      }
      await sleep(kind === "unavailable" ? 500 : 200);
    }
  };
  return {
    ...load,
    async run(stop, concurrency, pauseMs) {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (!stop()) {
            await one(++seq);
            await sleep(pauseMs);
          }
        }),
      );
    },
  };
}

export interface ChatLoad {
  tally: Tally;
  completed: number;
  /** Streams that ended with an in-band error event, by `type/code`. */
  inBandErrors: Record<string, number>;
  /** Streams cut before [DONE] (their instance died mid-stream). */
  truncated: number;
  /** 200s whose body was not the upstream's answer. */
  wrong: string[];
}

export function chatLoad(client: HttpsClient, apiUrl: string, apiKey: string): ChatLoad & { run(stop: () => boolean, concurrency: number, pauseMs: number): Promise<void> } {
  const load: ChatLoad = { tally: newTally(), completed: 0, inBandErrors: {}, truncated: 0, wrong: [] };
  let seq = 0;
  const one = async (n: number) => {
    const stream = n % 2 === 0;
    const o = await client.send(`${apiUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: `chat ${n}` }], stream, max_tokens: 64 }),
    });
    if (record(load.tally, o, [200]) !== "ok" || !isReply(o)) return;
    if (!stream) {
      if (o.json().choices?.[0]?.message?.content === "Hello from B") load.completed++;
      else load.wrong.push(o.text.slice(0, 300));
      return;
    }
    // A stream fails after its 200 in-band (an error event), or is cut when its instance dies.
    const inBand = o.text.match(/^data: (\{"error".*)$/m);
    if (inBand) {
      const code = (JSON.parse(inBand[1]!) as { error?: { code?: string; type?: string } }).error;
      const name = `${code?.type ?? "?"}/${code?.code ?? "?"}`;
      load.inBandErrors[name] = (load.inBandErrors[name] ?? 0) + 1;
      if (code?.type === "server_error") load.tally.serverErrors.push({ status: 200, body: inBand[1]!.slice(0, 300) });
    } else if (!o.text.includes("[DONE]")) load.truncated++;
    else if (o.text.includes(" from")) load.completed++;
    else load.wrong.push(o.text.slice(-300));
  };
  return {
    ...load,
    get completed() {
      return load.completed;
    },
    get truncated() {
      return load.truncated;
    },
    async run(stop, concurrency, pauseMs) {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (!stop()) {
            await one(++seq);
            await sleep(pauseMs);
          }
        }),
      );
    },
  };
}
