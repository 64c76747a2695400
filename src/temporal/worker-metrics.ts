import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import type { ActivityInterceptorsFactory } from "@temporalio/worker";
import type { Metrics } from "../infra/metrics.js";
import { sandboxPoolStats } from "../sandbox/index.js";

/**
 * The worker's /metrics (WORKER_METRICS_PORT): one scrape target with both the Temporal SDK's
 * metrics and ours. The SDK's Prometheus exporter runs in its native core and can only serve
 * from its own listener, so it is bound to a loopback port nobody else is told about and this
 * server appends its text to prom-client's. (Two documented targets would work too, but every
 * deployment would then have to scrape and secure two ports per worker.)
 */
export async function startWorkerMetricsServer(options: { metrics: Metrics; host: string; port: number; sdkMetricsUrl?: string }): Promise<{ url: string; close(): Promise<void> }> {
  const { metrics } = options;
  const server: Server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found: the worker serves GET /metrics\n");
      return;
    }
    render(metrics, options.sdkMetricsUrl).then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`metrics unavailable: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A loopback port for the SDK's own exporter (the OS picks; the SDK needs a concrete address). */
export function loopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer().unref().on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function render(metrics: Metrics, sdkMetricsUrl: string | undefined): Promise<string> {
  const pool = sandboxPoolStats();
  for (const state of ["size", "started", "busy", "queued"] as const) metrics.sandboxThreads.set({ state }, pool?.[state] ?? 0);
  const ours = await metrics.registry.metrics();
  if (!sdkMetricsUrl) return ours;
  const sdk = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2000) })
    .then((r) => (r.ok ? r.text() : `# Temporal SDK metrics unavailable (HTTP ${r.status})\n`))
    .catch(() => "# Temporal SDK metrics unavailable\n");
  return `${ours.endsWith("\n") ? ours : `${ours}\n`}${sdk}`;
}

/**
 * Job metrics recorded around the agentRun activities (by activity type, so the activities
 * themselves stay free of metrics code). Local activities pass through here too.
 */
export function jobMetricsInterceptor(metrics: Metrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const type = ctx.info.activityType;
        if (type !== "executeAgentRun") {
          const result = await next(input);
          if (type === "beginRun") metrics.jobRunsStarted.inc();
          else if (type === "markJobDone") metrics.jobRunsFinished.inc({ status: "done" });
          else if (type === "markJobFailed") metrics.jobRunsFinished.inc({ status: "failed" });
          return result;
        }
        const end = metrics.jobRunDuration.startTimer();
        try {
          const result = await next(input);
          end({ outcome: "ok" });
          // The activity marked the job done itself (the workflow then runs no markJobDone).
          if ((result as { done?: boolean } | undefined)?.done === true) metrics.jobRunsFinished.inc({ status: "done" });
          return result;
        } catch (err) {
          end({ outcome: "error" });
          throw err;
        }
      },
    },
  });
}
