import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "../dev/embedded-postgres.js";
import { freePort } from "../dev/free-port.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";

describe("health, readiness and metrics", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it("/healthz answers while the process is up", async () => {
    const res = await fetch(`${app.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("/readyz is 200 when PostgreSQL and Temporal answer", async () => {
    const res = await fetch(`${app.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { postgres: "ok", temporal: "ok" } });
  });

  it("/metrics serves Prometheus text with request counts and latency by route and status", async () => {
    await fetch(`${app.url}/healthz`);
    await fetch(`${app.url}/no/such/route`);
    const res = await fetch(`${app.url}/metrics`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz",status="200"\}/);
    for (const status of ["queued", "running"]) expect(text).toContain(`jobs{status="${status}"} 0`);
    expect(text).toContain("# TYPE job_status_events_total counter");
    expect(text).toMatch(/jobs_estimated_rows \d+/);
    expect(text).toContain("# TYPE upstream_request_duration_seconds histogram");
  });

  it("unknown routes answer 404 in the documented shapes (OpenAI envelope under /api/v1)", async () => {
    const plain = await fetch(`${app.url}/nope`);
    expect(plain.status).toBe(404);
    expect(await plain.json()).toEqual({ error: { code: "not_found", message: "No route for GET /nope" } });
    const openai = await fetch(`${app.url}/api/v1/nope`, { method: "POST" });
    expect(openai.status).toBe(404);
    expect(await openai.json()).toEqual({ error: { message: "No route for POST /api/v1/nope", type: "invalid_request_error", code: "not_found", param: null } });
  });

  it("/readyz is 503 naming Temporal when Temporal is unreachable", async () => {
    const other = await startTestApp({ databaseUrl: app.databaseUrl, env: { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` } });
    try {
      const res = await fetch(`${other.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string }; checks: Record<string, string> };
      expect(body.error.code).toBe("not_ready");
      expect(body.error.message).toMatch(/^Temporal unreachable/);
      expect(body.checks.postgres).toBe("ok");
    } finally {
      await other.close();
    }
  });
});

describe("readiness when PostgreSQL stops", () => {
  let dir: string;
  let pg: EmbeddedPostgresHandle;
  let app: TestApp;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "agw-ready-"));
    pg = await startEmbeddedPostgres(join(dir, "pg"));
    app = await startTestApp({ databaseUrl: pg.urlFor("postgres") });
  });
  afterAll(async () => {
    await app?.close();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 503 naming PostgreSQL, and /healthz stays 200", async () => {
    expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    await pg.stop();
    const res = await fetch(`${app.url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string }; checks: Record<string, string> };
    expect(body.error.message).toMatch(/^PostgreSQL unreachable/);
    expect(body.checks.temporal).toBe("ok");
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });
});
