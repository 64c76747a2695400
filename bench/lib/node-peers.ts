import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type autocannonFn from "autocannon";

/**
 * The benchmarks' Node peers (Portkey, autocannon) live in .tools/bench-node, installed on first
 * use by bench/install-node-peers.sh (as LiteLLM is by bench/install-litellm.sh), not in the
 * gateway's own dependencies: a user's `npm install` never fetches them.
 */
export const BENCH_NODE_DIR = resolve(".tools/bench-node");

let installed = false;
export function ensureNodePeers(): void {
  if (installed) return;
  execFileSync("bash", ["bench/install-node-peers.sh"], { stdio: "inherit" });
  installed = true;
}

/** The folder of an installed peer package (its package.json's directory). */
export function nodePeerDir(name: string): string {
  ensureNodePeers();
  return dirname(createRequire(resolve(BENCH_NODE_DIR, "package.json")).resolve(`${name}/package.json`));
}

export type Autocannon = typeof autocannonFn;

export async function loadAutocannon(): Promise<Autocannon> {
  ensureNodePeers();
  const entry = createRequire(resolve(BENCH_NODE_DIR, "package.json")).resolve("autocannon");
  return ((await import(pathToFileURL(entry).href)) as { default: Autocannon }).default;
}
