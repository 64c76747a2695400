/** Test helpers shared by the webhook, job and durability tests (not used by the app). */

export async function gql<T = any>(url: string, token: string, query: string, variables?: Record<string, unknown>): Promise<{ data?: T; errors?: any[] }> {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: T; errors?: any[] };
}

export async function createAgent(url: string, token: string, input: Record<string, unknown>): Promise<string> {
  const r = await gql<{ createAgent: { id: string } }>(url, token, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: input });
  if (!r.data) throw new Error(`createAgent: ${JSON.stringify(r.errors)}`);
  return r.data.createAgent.id;
}

export interface CreatedTrigger {
  id: string;
  secret: string;
  webhookUrl: string;
  testCommand: string;
  signedTestCommand: string;
}

export async function createTrigger(url: string, token: string, agentId: string, description = "test"): Promise<CreatedTrigger> {
  const r = await gql<{ createTrigger: { trigger: { id: string }; secret: string; webhookUrl: string; testCommand: string; signedTestCommand: string } }>(
    url,
    token,
    `mutation($a: ID!, $d: String) { createTrigger(agentId: $a, description: $d) { trigger { id } secret webhookUrl testCommand signedTestCommand } }`,
    { a: agentId, d: description },
  );
  if (!r.data) throw new Error(`createTrigger: ${JSON.stringify(r.errors)}`);
  const c = r.data.createTrigger;
  return { id: c.trigger.id, secret: c.secret, webhookUrl: c.webhookUrl, testCommand: c.testCommand, signedTestCommand: c.signedTestCommand };
}

export async function postWebhook(
  baseUrl: string,
  triggerId: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}/api/triggers/${triggerId}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, body: parsed };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Polls the status endpoint until the job is done or failed. */
export async function waitForJob(baseUrl: string, jobId: string, headers: Record<string, string>, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await getJson(`${baseUrl}/api/agent-run-jobs/${jobId}/status`, headers);
    if (r.status !== 200) throw new Error(`status ${r.status}: ${JSON.stringify(r.body)}`);
    if (r.body.status === "done" || r.body.status === "failed") return r.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${r.body.status}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
