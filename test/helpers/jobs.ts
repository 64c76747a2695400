import { createAccount, gql } from "./graphql.js";

/** An account, an agent (without a script it answers with its model) and a trigger, through GraphQL. */
export async function triggerFixture(baseUrl: string, operatorToken: string, script?: string): Promise<{ adminToken: string; triggerId: string; secret: string }> {
  const { adminToken } = await createAccount(baseUrl, operatorToken, `acct-${Math.random().toString(36).slice(2, 8)}`);
  const agent = await gql<{ createAgent: { id: string } }>(baseUrl, adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: "probe", ...(script ? { script } : {}) } });
  if (!agent.data) throw new Error(`createAgent: ${JSON.stringify(agent.errors)}`);
  const trigger = await gql<{ createTrigger: { trigger: { id: string }; secret: string } }>(
    baseUrl,
    adminToken,
    `mutation($a: ID!) { createTrigger(agentId: $a, description: "probe") { trigger { id } secret } }`,
    { a: agent.data.createAgent.id },
  );
  if (!trigger.data) throw new Error(`createTrigger: ${JSON.stringify(trigger.errors)}`);
  return { adminToken, triggerId: trigger.data.createTrigger.trigger.id, secret: trigger.data.createTrigger.secret };
}

/** Polls `job(id)` until it is DONE or FAILED; returns that status. */
export async function waitForJobEnd(baseUrl: string, adminToken: string, jobId: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await gql<{ job: { status: string } | null }>(baseUrl, adminToken, `query($id: ID!) { job(id: $id) { status } }`, { id: jobId });
    const status = r.data?.job?.status;
    if (status === "DONE" || status === "FAILED") return status;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`job ${jobId} did not finish within ${timeoutMs} ms`);
}
