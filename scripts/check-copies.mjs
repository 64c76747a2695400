#!/usr/bin/env node
// `npm run lint:copies`: no block of code copied between (or within) modules of src/ and web/src.
// jscpd (token-based, so renamed variables still match) over the code that ships. Tests are not
// checked: a test spells out its own setup so it reads on its own; what several tests share
// belongs in test/helpers/, which review keeps honest. Generated migrations are not checked either.
// Known copies that are being removed are listed in ALLOWED, each with who removes it.
import { createRequire } from "node:module";

// The CommonJS build: jscpd 4.3's ESM build imports `colors/safe` without an extension.
const { detectClones } = createRequire(import.meta.url)("jscpd");

/** Files (`a|b`, sorted) whose copies are being removed. Remove an entry when its fix is on main. */
const ALLOWED = [
];

const clones = await detectClones({
  path: ["src", "web/src"],
  format: ["typescript", "tsx"],
  // Entity declarations (db/schema.ts, db/schema/) are data: each table states its own key columns.
  ignore: ["**/*.test.ts", "**/*.test.tsx", "**/migrations/**", "**/node_modules/**", "src/db/schema.ts", "src/db/schema/**"],
  // ~5 lines of real code; below that, matches are mostly imports and entity column lists.
  minTokens: 50,
  minLines: 5,
  gitignore: true,
  silent: true,
  reporters: [],
  absolute: false,
});

const used = new Set();
const problems = [];
for (const c of clones) {
  const a = c.duplicationA, b = c.duplicationB;
  const key = [a.sourceId, b.sourceId].sort().join("|");
  const allowed = ALLOWED.find((x) => x.files === key);
  if (allowed) {
    used.add(allowed);
    continue;
  }
  problems.push(`${a.sourceId}:${a.start.line}-${a.end.line} = ${b.sourceId}:${b.start.line}-${b.end.line}`);
}
for (const a of ALLOWED) if (!used.has(a)) process.stderr.write(`note: allowlist entry no longer needed, remove it: ${a.files} (${a.owner})\n`);
if (problems.length) {
  process.stderr.write(`Copy check failed: ${problems.length} copied block(s); move the shared code into one module:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`Copy check passed: no copied blocks in src/ and web/src (${used.size} allowlisted).\n`);
