import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generatedReferences } from "../src/app/docs-file.js";
import { CONFIG_AREAS, CONFIG_VARIABLES } from "../src/config/config.js";
import { ERROR_CATALOGUE } from "../src/errors/app-error.js";

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), "utf8");

describe("the generated references in docs/reference/", () => {
  it("are committed fresh: configuration.md, errors.md and graphql.md match their sources (npm run docs:write)", () => {
    for (const [path, text] of Object.entries(generatedReferences())) expect(read(path), `${path} is stale: npm run docs:write`).toBe(text);
  });

  it("document every variable in one area, and every error code with its meaning and what to do", () => {
    expect(CONFIG_AREAS.flatMap((a) => Object.keys(a.variables)).sort()).toEqual([...CONFIG_VARIABLES].sort());
    const errors = read("docs/reference/errors.md");
    for (const [code, e] of Object.entries(ERROR_CATALOGUE)) {
      expect(e.meaning.length, code).toBeGreaterThan(10);
      expect(e.action.length, code).toBeGreaterThan(10);
      expect(errors, code).toContain(`| \`${code}\` | ${e.status} | \`${e.graphql}\` |`);
    }
  });

  it("covers every query, mutation and subscription of schema.graphql", () => {
    const graphql = read("docs/reference/graphql.md");
    const sdl = read("schema.graphql");
    for (const root of ["Query", "Mutation", "Subscription"]) {
      const block = new RegExp(`^type ${root} \\{\\n([\\s\\S]*?)^\\}`, "m").exec(sdl)?.[1] ?? "";
      for (const [, name] of block.matchAll(/^  (\w+)[(:]/gm)) expect(graphql, `${root}.${name}`).toContain(`### \`${name}\``);
    }
  });
});
