import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/** A JavaScript agent framework, unmodified: the Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`) runs a tool loop against the gateway. */
describe("Vercel AI SDK with tools (openai-compatible provider)", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let gateway: ReturnType<typeof createOpenAICompatible>;
  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    const acc = await createAccount(app.url, app.operatorToken, "vercel", "10");
    const agent = (await gql(app.url, acc.adminToken, `mutation { createAgent(input: { name: "v" }) { id } }`)).data!.createAgent.id;
    const key = (await gql(app.url, acc.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "v") { key } }`, { a: agent })).data!.createApiKey.key;
    gateway = createOpenAICompatible({ name: "agent-gateway", baseURL: `${app.url}/api/v1`, apiKey: key, includeUsage: true });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  const weather = () => {
    const cities: string[] = [];
    const t = tool({
      description: "Weather in a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        cities.push(city);
        return `sunny in ${city}`;
      },
    });
    return { cities, t };
  };

  for (const model of ["provider_a/model-2.5-pro", "provider_b/model-haiku-4-5-20251001"]) {
    it(`generateText runs the tool and answers (${model})`, async () => {
      const w = weather();
      const r = await generateText({ model: gateway(model), tools: { get_weather: w.t }, stopWhen: stepCountIs(4), prompt: "Weather in Paris?", maxRetries: 0 });
      expect(w.cities).toEqual(["Paris"]);
      expect(r.steps).toHaveLength(2);
      expect(r.steps[0]!.finishReason).toBe("tool-calls");
      expect(r.text).toContain("sunny in Paris");
      expect(r.totalUsage.inputTokens).toBeGreaterThan(0);
    });

    it(`streamText streams the tool call and the answer (${model})`, async () => {
      const w = weather();
      const r = streamText({ model: gateway(model), tools: { get_weather: w.t }, stopWhen: stepCountIs(4), prompt: "Weather in Paris?", maxRetries: 0 });
      let text = "";
      for await (const part of r.textStream) text += part;
      expect(w.cities).toEqual(["Paris"]);
      expect(text).toContain("sunny in Paris");
    });
  }
});
