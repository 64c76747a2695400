import "reflect-metadata";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildGraphQLSchema, printSchemaFile } from "./schema.js";

/** `npm run schema:write` regenerates schema.graphql; `npm run schema:check` fails when it is stale. */
const file = fileURLToPath(new URL("../../schema.graphql", import.meta.url));
const mode = process.argv[2];
const text = printSchemaFile(await buildGraphQLSchema());
if (mode === "write") {
  writeFileSync(file, text);
  process.stdout.write(`wrote ${file}\n`);
} else {
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (current !== text) {
    process.stderr.write("schema.graphql is stale: it does not match the resolvers. Run `npm run schema:write` and commit the result.\n");
    process.exit(1);
  }
  process.stdout.write("schema.graphql is up to date\n");
}
