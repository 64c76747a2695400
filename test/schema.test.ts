import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildGraphQLSchema, printSchemaFile } from "../src/app/schema.js";

describe("schema.graphql", () => {
  it("is generated from the resolvers and committed fresh (npm run schema:write)", async () => {
    const committed = readFileSync(fileURLToPath(new URL("../schema.graphql", import.meta.url)), "utf8");
    expect(committed).toBe(printSchemaFile(await buildGraphQLSchema()));
  });

  it("exposes the names clients rely on", async () => {
    const schema = await buildGraphQLSchema();
    const query = schema.getQueryType()!.getFields();
    const mutation = schema.getMutationType()!.getFields();
    for (const name of ["me", "agents", "agent"]) expect(query[name], name).toBeDefined();
    for (const name of ["createAgent", "updateAgent", "deleteAgent", "createAccount", "topUpBalance", "updateAccountSettings"]) expect(mutation[name], name).toBeDefined();
  });
});
