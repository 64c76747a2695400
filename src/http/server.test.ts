import { get } from "node:http";
import { Router } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";
import { startHttpServer, type RouteModule } from "./server.js";
import { testEnv } from "../../test/helpers/app.js";
import { createTestDatabase } from "../../test/helpers/db.js";

describe("route modules with machinery of their own", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: Runtime;
  beforeAll(async () => {
    db = await createTestDatabase();
    runtime = await createRuntime(loadConfig(testEnv(db.url)), { role: "test" });
  });
  afterAll(async () => {
    await runtime?.close();
    await db?.drop();
  });

  it("are closed once, when the server has drained its in-flight requests", async () => {
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: RouteModule = () => ({
      router: Router().get("/slow", async (_req, res) => {
        events.push("request started");
        await gate;
        events.push("request answered");
        res.json({ ok: true });
      }),
      close: () => {
        events.push("module closed");
      },
    });
    const api = await startHttpServer(runtime, { routes: [slow], port: 0, host: "127.0.0.1" });
    // No keep-alive (agent: false), so the server can finish draining as soon as it has answered.
    const inFlight = new Promise<unknown>((resolve, reject) =>
      get(`${api.url}/slow`, { agent: false }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve(JSON.parse(body)));
      }).on("error", reject),
    );
    while (!events.includes("request started")) await new Promise((r) => setTimeout(r, 10));
    const closing = api.close(30_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual(["request started"]); // still draining: the module is not closed yet
    release();
    expect(await inFlight).toEqual({ ok: true });
    await closing;
    await api.close();
    expect(events).toEqual(["request started", "request answered", "module closed"]);
  });
});
