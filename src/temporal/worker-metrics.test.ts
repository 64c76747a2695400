import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { triggerFixture, waitForJobEnd } from "../../test/helpers/jobs.js";
import { Metrics } from "../infra/metrics.js";
import { loopbackPort, startWorkerMetricsServer } from "./worker-metrics.js";

describe("worker /metrics (WORKER_METRICS_PORT)", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ worker: true, env: { WORKER_METRICS_PORT: "0" } });
  });
  afterAll(async () => app?.close());

  it("one endpoint serves the Temporal SDK's metrics and the job metrics", async () => {
    const url = app.worker!.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const { adminToken, triggerId, secret } = await triggerFixture(app.url, app.operatorToken);
    const res = await fetch(`${app.url}/api/triggers/${triggerId}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-trigger-secret": secret },
      body: JSON.stringify({ hello: "metrics" }),
    });
    expect(res.status).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };
    expect(await waitForJobEnd(app.url, adminToken, job_id)).toBe("DONE");

    // The SDK exports on its own schedule: scrape until its worker metrics show up.
    let text = "";
    for (let i = 0; i < 100; i++) {
      const scrape = await fetch(url);
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get("content-type")).toMatch(/^text\/plain/);
      text = await scrape.text();
      if (/^temporal_\w+/m.test(text)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(text).toMatch(/^temporal_\w+(\{[^}]*\})? \d/m);
    expect(text).toMatch(/^job_runs_started_total 1$/m);
    expect(text).toMatch(/^job_runs_finished_total\{status="done"\} 1$/m);
    expect(text).toMatch(/^job_run_duration_seconds_count\{outcome="ok"\} 1$/m);
    expect(text).toMatch(/^sandbox_pool_threads\{state="size"\} \d+$/m);
    expect(text).toMatch(/^sandbox_pool_threads\{state="busy"\} 0$/m);
    // Each metric family once: the two sources do not collide.
    const types = text.split("\n").filter((l) => l.startsWith("# TYPE "));
    expect(new Set(types).size).toBe(types.length);

    expect((await fetch(url.replace("/metrics", "/other"))).status).toBe(404);
  });
});

describe("worker /metrics when the SDK's exporter does not answer", () => {
  it("still serves the job metrics, saying what is missing", async () => {
    const dead = await loopbackPort(); // nothing listens there
    const server = await startWorkerMetricsServer({ metrics: new Metrics(false), host: "127.0.0.1", port: 0, sdkMetricsUrl: `http://127.0.0.1:${dead}/metrics` });
    try {
      const res = await fetch(server.url);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain("# TYPE job_runs_started_total counter");
      expect(text).toContain("# Temporal SDK metrics unavailable");
      expect((await fetch(server.url, { method: "POST" })).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
