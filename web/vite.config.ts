import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const webDir = fileURLToPath(new URL(".", import.meta.url));

/** The web console: web/ → dist/web, served by the API at `/` (src/console/routes.ts). */
export default defineConfig({
  root: webDir,
  base: "/",
  publicDir: false,
  logLevel: "warn",
  mode: "production",
  // Always React's production build, whatever NODE_ENV the caller runs with (vitest sets "test").
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  oxc: { jsx: { runtime: "automatic", development: false } },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    target: "es2022",
  },
});
