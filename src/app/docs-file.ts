import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configurationReference, errorsReference, graphqlReference } from "./reference-docs.js";

/** `npm run docs:write` regenerates the generated references in docs/reference/; `npm run docs:check` fails when one is stale. */
const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(fileURLToPath(new URL(path, root)), "utf8");

export const generatedReferences = (): Record<string, string> => ({
  "docs/reference/configuration.md": configurationReference(),
  "docs/reference/errors.md": errorsReference(),
  "docs/reference/graphql.md": graphqlReference(read("schema.graphql")),
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  let stale = 0;
  for (const [path, text] of Object.entries(generatedReferences())) {
    const file = fileURLToPath(new URL(path, root));
    if (mode === "write") {
      writeFileSync(file, text);
      process.stdout.write(`wrote ${path}\n`);
    } else if ((existsSync(file) ? readFileSync(file, "utf8") : "") !== text) {
      process.stderr.write(`${path} is stale: run \`npm run docs:write\` and commit the result.\n`);
      stale++;
    }
  }
  if (stale) process.exit(1);
  if (mode !== "write") process.stdout.write("docs/reference is up to date\n");
}
