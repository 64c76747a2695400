import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

const AGENT_FIELDS = "id name instructions defaultModel allowedModels kind script createdAt updatedAt";

describe("agents over GraphQL", () => {
  let app: TestApp;
  let acme: string;
  let globex: string;
  beforeAll(async () => {
    app = await startTestApp();
    acme = (await createAccount(app.url, app.operatorToken, "acme")).adminToken;
    globex = (await createAccount(app.url, app.operatorToken, "globex")).adminToken;
  });
  afterAll(async () => app?.close());

  it("creates, reads, lists, updates and deletes an agent", async () => {
    const created = await gql(app.url, acme, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { ${AGENT_FIELDS} } }`, {
      i: { name: "Support bot", instructions: "Be brief.", defaultModel: "provider_b/model-sonnet-4-6" },
    });
    const agent = created.data!.createAgent;
    expect(agent).toMatchObject({
      id: expect.stringMatching(/^agt_/),
      name: "Support bot",
      instructions: "Be brief.",
      defaultModel: "provider_b/model-sonnet-4-6",
      allowedModels: null,
      kind: "CHAT",
      script: null,
    });

    const read = await gql(app.url, acme, `query($id: ID!) { agent(id: $id) { name kind } }`, { id: agent.id });
    expect(read.data).toEqual({ agent: { name: "Support bot", kind: "CHAT" } });

    const script = "export default async function run(input, ctx) { return { echo: input }; }";
    const updated = await gql(app.url, acme, `mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { name kind script allowedModels defaultModel instructions } }`, {
      id: agent.id,
      i: { name: "Automation", script, allowedModels: ["provider_b/model-sonnet-4-6", "provider_a/model-2.5-pro"] },
    });
    expect(updated.data!.updateAgent).toEqual({
      name: "Automation",
      kind: "AUTOMATION",
      script,
      allowedModels: ["provider_b/model-sonnet-4-6", "provider_a/model-2.5-pro"],
      defaultModel: "provider_b/model-sonnet-4-6",
      instructions: "Be brief.",
    });

    const cleared = await gql(app.url, acme, `mutation($id: ID!) { updateAgent(id: $id, input: { script: null, allowedModels: null }) { kind script allowedModels } }`, { id: agent.id });
    expect(cleared.data!.updateAgent).toEqual({ kind: "CHAT", script: null, allowedModels: null });

    const list = await gql(app.url, acme, "{ agents { id } }");
    expect(list.data!.agents).toEqual([{ id: agent.id }]);

    const del = await gql(app.url, acme, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: agent.id });
    expect(del.data).toEqual({ deleteAgent: true });
    expect((await gql(app.url, acme, `query($id: ID!) { agent(id: $id) { id } }`, { id: agent.id })).data).toEqual({ agent: null });
  });

  it("defaults the model and rejects invalid input with the field named", async () => {
    const ok = await gql(app.url, acme, `mutation { createAgent(input: { name: "Defaults" }) { defaultModel instructions } }`);
    expect(ok.data!.createAgent).toEqual({ defaultModel: "provider_a/model-2.5-flash", instructions: "" });
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "" }, "name"],
      [{ name: "x".repeat(201) }, "name"],
      [{ name: "x", defaultModel: "gpt-4o" }, "defaultModel"],
      [{ name: "x", allowedModels: ["provider_a/nope"] }, "allowedModels"],
      [{ name: "x", allowedModels: [] }, "allowedModels"],
      [{ name: "x", defaultModel: "provider_a/model-2.5-pro", allowedModels: ["provider_b/model-sonnet-4-6"] }, "defaultModel"],
    ];
    for (const [input, param] of cases) {
      const r = await gql(app.url, acme, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: input });
      expect(r.errors?.[0]?.extensions, JSON.stringify(input)).toMatchObject({ code: "BAD_USER_INPUT", param });
    }
  });

  it("isolates tenants: another account's agent id behaves exactly like a missing one", async () => {
    const mine = (await gql(app.url, acme, `mutation { createAgent(input: { name: "Private" }) { id } }`)).data!.createAgent.id as string;
    const missing = "agt_0000000000000000000000";

    const theirs = await gql(app.url, globex, `query($id: ID!) { agent(id: $id) { id } }`, { id: mine });
    const none = await gql(app.url, globex, `query($id: ID!) { agent(id: $id) { id } }`, { id: missing });
    expect(theirs).toEqual(none);
    expect(theirs.data).toEqual({ agent: null });
    expect((await gql(app.url, globex, "{ agents { id } }")).data!.agents).toEqual([]);

    for (const mutation of [`updateAgent(id: $id, input: { name: "pwned" }) { id }`, `deleteAgent(id: $id)`]) {
      const foreign = await gql(app.url, globex, `mutation($id: ID!) { ${mutation} }`, { id: mine });
      const unknown = await gql(app.url, globex, `mutation($id: ID!) { ${mutation} }`, { id: missing });
      expect(foreign.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
      expect(foreign.errors?.[0]?.message.replace(mine, "ID")).toBe(unknown.errors?.[0]?.message.replace(missing, "ID"));
    }
    const still = await gql(app.url, acme, `query($id: ID!) { agent(id: $id) { name } }`, { id: mine });
    expect(still.data).toEqual({ agent: { name: "Private" } });
  });
});
