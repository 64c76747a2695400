#!/usr/bin/env node
// `npm run lint:closures`: no function literal written straight into a property inside a function
// of src/ (`res.json = (body) => …`). V8's parser marks such a literal to be allocated in the old
// generation (it expects a method, set once and kept). Made per request, it dies young but is
// only found dead by a full collection; until then every young collection treats it as live and
// promotes what it closes over: the request's scope, often the request and response themselves.
// Name the function first (`const f = …; obj.p = f`), return it from a helper, or share one
// function that finds its object through `this`. A site that runs once per process says so in a
// comment above it containing "once per process".
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const MARK = "once per process";

/** `{ line, text }` of each function literal assigned to a property inside a function body. */
export function pretenuredClosures(source, fileName = "x.ts") {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found = [];
  const strip = (e) => {
    while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
    return e;
  };
  const visit = (node, inFunction) => {
    if (
      inFunction &&
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left)) &&
      (ts.isArrowFunction(strip(node.right)) || ts.isFunctionExpression(strip(node.right)))
    ) {
      let statement = node;
      while (statement.parent && !ts.isExpressionStatement(statement) && !ts.isSourceFile(statement.parent)) statement = statement.parent;
      const comments = (ts.getLeadingCommentRanges(source, statement.getFullStart()) ?? []).map((r) => source.slice(r.pos, r.end)).join("\n");
      if (!comments.toLowerCase().includes(MARK)) {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart());
        found.push({ line: line + 1, text: node.getText().split("\n")[0] });
      }
    }
    const fn = ts.isFunctionLike(node) && !ts.isSourceFile(node);
    ts.forEachChild(node, (child) => visit(child, inFunction || fn));
  };
  visit(file, false);
  return found;
}

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) yield path;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(fileURLToPath(import.meta.url), "../..");
  let failed = 0;
  for (const path of sources(join(root, "src"))) {
    for (const { line, text } of pretenuredClosures(readFileSync(path, "utf8"), path)) {
      console.error(`${relative(root, path)}:${line}: a function literal written into a property: ${text}`);
      failed++;
    }
  }
  if (failed) {
    console.error(`\n${failed} function literal(s) written into properties inside functions. V8 allocates them in the old`);
    console.error(`generation, where they keep the request's scope through young collections. Name the function`);
    console.error(`first, return it from a helper, or share one that finds its object through \`this\`; if the site`);
    console.error(`runs once per process, say so in a comment above it ("${MARK}").`);
    process.exit(1);
  }
}
