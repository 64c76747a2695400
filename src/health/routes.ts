import { Router } from "express";
import type { Runtime } from "../runtime/runtime.js";
import { JobMetrics } from "./job-metrics.js";

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]);
}

async function check(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return "ok";
  } catch (err) {
    return (err as Error).message || "unreachable";
  }
}

/** /healthz: the process is up. /readyz: PostgreSQL and Temporal answer. /metrics: Prometheus. */
export function healthRoutes(runtime: Runtime): Router {
  const router = Router();
  const jobs = new JobMetrics(runtime, runtime.config.metricsJobsRefreshMs);
  void jobs.start().catch((err) => runtime.log.warn({ err }, "could not listen for job status events (metrics)"));
  runtime.closeHooks?.push(() => jobs.close());
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    if (runtime.starting) {
      res.status(503).json({ error: { code: "not_ready", message: `Starting: ${runtime.starting}` } });
      return;
    }
    const [postgres, temporal] = await Promise.all([
      check(() => withTimeout(runtime.pool.query("select 1"), 2000, "PostgreSQL")),
      check(() => runtime.temporal.ping(2000)),
    ]);
    const checks = { postgres, temporal };
    if (postgres === "ok" && temporal === "ok") {
      res.json({ status: "ready", checks });
      return;
    }
    const down = [postgres !== "ok" && `PostgreSQL unreachable (${postgres})`, temporal !== "ok" && `Temporal unreachable (${temporal})`].filter(Boolean);
    res.status(503).json({ error: { code: "not_ready", message: down.join("; ") }, checks });
  });
  router.get("/metrics", async (_req, res) => {
    await withTimeout(jobs.refreshIfStale(), 2000, "PostgreSQL").catch((err) => runtime.log.warn({ err }, "could not refresh the job gauges for /metrics"));
    res.setHeader("Content-Type", runtime.metrics.registry.contentType);
    res.send(await runtime.metrics.registry.metrics());
  });
  return router;
}
