import { bundleWorkflowCode, DefaultLogger } from "@temporalio/worker";

/**
 * Run as a child process by workflow-bundle.ts: bundles the workflow code at argv[2] (webpack,
 * through the SDK) and writes the bundle to stdout. Nothing else here: the bundler's modules and
 * its garbage stay in this short-lived process, not in the worker.
 */
const workflowsPath = process.argv[2];
if (!workflowsPath) throw new Error("usage: bundle-child <workflowsPath>");
const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger("WARN") });
process.stdout.write(code);
