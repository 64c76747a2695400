import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CJS build (type-graphql, Apollo load it that way); Vite would
    // pick the ESM build for our files and graphql then rejects schemas "from another realm".
    alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }],
  },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    reporters: ["default"],
    sequence: { sequencer: LongestFirst },
  },
});
