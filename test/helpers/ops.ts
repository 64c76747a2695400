import { gql } from "./graphql.js";

/** Small setup steps for the operations tests, all through the public API. */

/** Runs a GraphQL operation that must succeed; returns its data. */
export async function must<T = any>(url: string, token: string, query: string, variables?: Record<string, unknown>): Promise<T> {
  const r = await gql<T>(url, token, query, variables);
  if (!r.data || r.errors?.length) throw new Error(`GraphQL failed: ${JSON.stringify(r.errors)}`);
  return r.data;
}

export async function newAgent(url: string, token: string, input: Record<string, unknown> = {}): Promise<string> {
  const d = await must<{ createAgent: { id: string } }>(url, token, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, {
    i: { name: "agent", instructions: "Be brief.", ...input },
  });
  return d.createAgent.id;
}

export async function newTrigger(url: string, token: string, agentId: string): Promise<{ id: string; secret: string }> {
  const d = await must<{ createTrigger: { trigger: { id: string }; secret: string } }>(
    url,
    token,
    `mutation($a: ID!) { createTrigger(agentId: $a, description: "ops") { trigger { id } secret } }`,
    { a: agentId },
  );
  return { id: d.createTrigger.trigger.id, secret: d.createTrigger.secret };
}

export async function postWebhook(url: string, trigger: { id: string; secret: string }, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/triggers/${trigger.id}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-trigger-secret": trigger.secret, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Polls job(id) until it is DONE or FAILED. */
export async function waitForJob(url: string, token: string, jobId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await must<{ job: any }>(url, token, `query($id: ID!) { job(id: $id) { id status error attempts cost threadId result } }`, { id: jobId });
    if (d.job && (d.job.status === "DONE" || d.job.status === "FAILED")) return d.job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${d.job?.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Page<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Follows a connection from the first page to the last; returns every node in order and the page count. */
export async function allPages<T>(fetchPage: (after: string | null) => Promise<Page<T>>): Promise<{ nodes: T[]; pages: number }> {
  const nodes: T[] = [];
  let after: string | null = null;
  let pages = 0;
  for (;;) {
    const page = await fetchPage(after);
    pages++;
    nodes.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) return { nodes, pages };
    after = page.pageInfo.endCursor;
  }
}
