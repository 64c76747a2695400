import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The workflow code bundle, built in a child process. Bundling in the worker itself
 * (`Worker.create({ workflowsPath })`) loads webpack and its loaders into the worker for good:
 * measured with SDK 1.24, the worker's resident memory grows by about 100 MB and does not come
 * back (docs/capacity.md, "Memory"). A child process returns all of it when it exits; the bundle
 * (about 1.7 MB of code) is the same, and is kept per process so a second worker of the same
 * process (the tests start several) does not bundle again.
 */
const bundles = new Map<string, Promise<string>>();

export function workflowBundle(workflowsPath: string): Promise<{ code: string }> {
  let code = bundles.get(workflowsPath);
  if (!code) {
    code = bundleApart(workflowsPath);
    bundles.set(workflowsPath, code);
    code.catch(() => bundles.delete(workflowsPath)); // a failed bundle is tried again next time
  }
  return code.then((c) => ({ code: c }));
}

function bundleApart(workflowsPath: string): Promise<string> {
  const fromSource = import.meta.url.endsWith(".ts");
  const child = new URL(fromSource ? "./bundle-child.ts" : "./bundle-child.js", import.meta.url);
  // Run from the TypeScript source (npm start, the tests), the child needs the same loader.
  const args = [...(fromSource ? ["--import", "@swc-node/register/esm-register"] : []), fileURLToPath(child), workflowsPath];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    proc.stdout.on("data", (d: Buffer) => out.push(d));
    proc.stderr.setEncoding("utf8").on("data", (d: string) => (err = (err + d).slice(-4000)));
    proc.once("error", reject);
    proc.once("close", (status) => {
      if (status === 0) resolve(Buffer.concat(out).toString("utf8"));
      else reject(new Error(`bundling the workflows (${workflowsPath}) failed with exit code ${status}: ${err.trim()}`));
    });
  });
}
