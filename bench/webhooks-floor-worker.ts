import { fileURLToPath } from "node:url";
import { DefaultLogger, NativeConnection, Runtime, Worker } from "@temporalio/worker";

/**
 * The bare floor's worker for bench/webhooks.ts, in a process of its own as `npm run worker` is:
 * `benchNoop` (one no-op activity) on task queue argv[3] of the server at argv[2]. Prints "ready"
 * once it polls; stops on SIGTERM.
 */
const [address, taskQueue] = process.argv.slice(2);
Runtime.install({ logger: new DefaultLogger("WARN") });
const connection = await NativeConnection.connect({ address: address! });
const worker = await Worker.create({
  connection,
  taskQueue: taskQueue!,
  workflowsPath: fileURLToPath(new URL("./webhooks-workflows.ts", import.meta.url)),
  activities: { async noop() {} },
});
process.once("SIGTERM", () => worker.shutdown());
const running = worker.run();
process.stdout.write("ready\n");
await running;
await connection.close();
