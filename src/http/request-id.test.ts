import { PassThrough } from "node:stream";
import { Router } from "express";
import fc from "fast-check";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { createLogger } from "../infra/logger.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";
import type { ApiServer, RouteModule } from "./server.js";
import { startApi } from "../app/api.js";
import { apiRoutes } from "../app/routes.js";
import { acceptableRequestId } from "./request-id.js";
import { testEnv } from "../../test/helpers/app.js";
import { createTestDatabase } from "../../test/helpers/db.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A module several awaits away from the request handler that logs with the process logger and
 * is handed no id: the stand-in for dispatcher, engine, key auth…
 */
async function deepWork(runtime: Runtime, tag: string): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 15)));
  await runtime.pool.query("select 1");
  await Promise.resolve().then(() => runtime.log.info({ tag }, "deep line"));
}

const probe: RouteModule = (runtime) =>
  Router().get("/test/deep/:tag", async (req, res) => {
    await deepWork(runtime, String(req.params.tag));
    res.json({ ok: true });
  });

describe("x-request-id and request-scoped logging", () => {
  let runtime: Runtime;
  let api: ApiServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    const config = loadConfig(testEnv(db.url, { LOG_LEVEL: "debug" }));
    const stream = new PassThrough();
    let buf = "";
    stream.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
        buf = buf.slice(nl + 1);
      }
    });
    runtime = await createRuntime(config, { log: createLogger("debug", "test", stream) });
    api = await startApi(runtime, { routes: [probe, ...apiRoutes], port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await api?.close(1000);
    await runtime?.close();
    await db?.drop();
  });

  const settle = () => new Promise((r) => setTimeout(r, 50));

  it("echoes an acceptable id on every kind of route, and generates one otherwise", async () => {
    const targets: [string, RequestInit][] = [
      ["/healthz", {}],
      ["/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) }],
      ["/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" }],
      ["/api/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      ["/api/triggers/nope/webhook", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      ["/no/such/route", {}],
      ["/", {}],
      ["/metrics", {}],
    ];
    for (const [path, init] of targets) {
      const id = `req-${Math.random().toString(36).slice(2)}`;
      const echoed = await fetch(`${api.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), "x-request-id": id } });
      await echoed.arrayBuffer();
      expect(echoed.headers.get("x-request-id"), path).toBe(id);
      const fresh = await fetch(`${api.url}${path}`, init);
      await fresh.arrayBuffer();
      expect(fresh.headers.get("x-request-id"), path).toMatch(UUID);
    }
  });

  it("the graphql-ws upgrade answer carries it too", async () => {
    const upgradeId = (sent?: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        const ws = new WebSocket(`${api.url.replace("http", "ws")}/graphql`, "graphql-transport-ws", { headers: sent ? { "x-request-id": sent } : {} });
        ws.once("upgrade", (res) => resolve(res.headers["x-request-id"] as string | undefined));
        ws.once("open", () => ws.close());
        ws.once("error", reject);
      });
    expect(await upgradeId("ws-upgrade-1")).toBe("ws-upgrade-1");
    expect(await upgradeId()).toMatch(UUID);
    expect(await upgradeId("x".repeat(200))).toMatch(UUID);
  });

  it("stamps every log line of a request with its id, deep modules included, under concurrency", async () => {
    lines.length = 0;
    const tags = Array.from({ length: 30 }, (_, i) => `t${i}-${Math.random().toString(36).slice(2, 8)}`);
    await Promise.all(
      tags.map(async (tag) => {
        const res = await fetch(`${api.url}/test/deep/${tag}`, { headers: { "x-request-id": `id-${tag}` } });
        expect(res.headers.get("x-request-id")).toBe(`id-${tag}`);
        await res.json();
      }),
    );
    await settle();
    const deep = lines.filter((l) => l.msg === "deep line");
    expect(deep).toHaveLength(tags.length);
    for (const l of deep) expect(l.requestId).toBe(`id-${l.tag as string}`);
    const completed = lines.filter((l) => l.msg === "request completed");
    expect(completed).toHaveLength(tags.length);
    for (const l of completed) expect(l.requestId).toBe(`id-${(l.req as { url: string }).url.split("/").pop()}`);
    // Nothing logged outside a request picked up a stray id.
    for (const l of lines) expect(l.requestId === undefined || String(l.requestId).startsWith("id-t")).toBe(true);
  });

  it("stamps error and 404 lines too", async () => {
    lines.length = 0;
    await (await fetch(`${api.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": "bad-json-1" }, body: "{" })).arrayBuffer();
    await (await fetch(`${api.url}/missing`, { headers: { "x-request-id": "missing-1" } })).arrayBuffer();
    await settle();
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.map((l) => l.requestId).sort()).toEqual(["bad-json-1", "missing-1"]);
  });

  it("replaces hostile or unusual ids: never echoed, never logged", async () => {
    const hostile = fc.oneof(
      fc.string({ minLength: 129, maxLength: 400 }).filter((s) => /^[\x21-\x7e]+$/.test(s)),
      fc.string({ minLength: 1, maxLength: 60 }).map((s) => `${s} <script>"'`),
      fc.constantFrom(`opr_${"A".repeat(32)}`, `a2a_${"b".repeat(20)}`, "whsec_" + "c".repeat(20), "ü-latin1", "a b", "a,b", "{}"),
    );
    await fc.assert(
      fc.asyncProperty(hostile, async (id) => {
        fc.pre(id.trim() === id && !/[\r\n\0]/.test(id));
        lines.length = 0;
        const res = await fetch(`${api.url}/no/such/route`, { headers: { "x-request-id": Buffer.from(id, "latin1").toString("latin1") } }).catch(() => undefined);
        if (!res) return; // the client itself refused to send it
        await res.arrayBuffer();
        expect(res.headers.get("x-request-id")).toMatch(UUID);
        await settle();
        expect(JSON.stringify(lines)).not.toContain(id);
      }),
      { numRuns: 40 },
    );
  });

  it("accepts the usual id shapes (unit)", () => {
    for (const ok of ["3f1c2a9e-9f4b-4c1e-8a3d-1b2c3d4e5f60", "abc123", "trace:1:2", "YWJj+/=", "x".repeat(128)]) expect(acceptableRequestId(ok)).toBe(true);
    for (const bad of ["", "x".repeat(129), "a b", "a\tb", "a\u00e9", undefined, ["a", "b"]]) expect(acceptableRequestId(bad)).toBe(false);
  });
});
