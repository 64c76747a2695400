/**
 * Import rules (ARCHITECTURE.md, "Folders"), run by `npm run lint:deps` (scripts/check-deps.mjs,
 * which also checks cycles between folders and holds the allowlist of known violations).
 * Type-only imports count: a cycle through types is still a cycle in the design.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "no-module-cycles",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "workflows-deterministic",
      comment: "Workflow code is replayed: it imports only @temporalio/workflow, other workflow files, and types.",
      severity: "error",
      from: { path: "^workflows/" },
      to: { pathNot: ["^workflows/", "@temporalio/workflow"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "no-test-code-in-production",
      comment: "dist/ carries no test helpers: production modules never import test/ or *.test files.",
      severity: "error",
      from: { path: "^(src|web/src|workflows)/", pathNot: "\\.test\\.tsx?$" },
      to: { path: ["^test/", "\\.test\\.tsx?$"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Tests may import anything (they are leaves); the rules are about the code that ships.
    exclude: { path: ["(^|/)(node_modules|dist)/", "\\.test\\.tsx?$"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
