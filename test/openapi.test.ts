import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Express } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAccount, gql } from "./helpers/graphql.js";

/**
 * The OpenAPI document (src/http/openapi.json) against the running API: it is what
 * GET /openapi.json serves; real requests to every documented operation answer a documented
 * status with a body valid against the documented schema; and the documented routes are exactly
 * the routes Express has registered.
 */

type Json = Record<string, any>;
const source = JSON.parse(readFileSync(fileURLToPath(new URL("../src/http/openapi.json", import.meta.url)), "utf8")) as Json;
const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const pointer = (...parts: string[]) => "#/" + parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

const ajv = new Ajv2020({ strict: false, validateFormats: false, allowUnionTypes: true });
ajv.addSchema(source, "openapi.json");

/** Operations documented, as "method /path" (x-mounted: served by a mounted handler, not an Express route). */
const documented = new Map<string, { operation: Json; mounted: boolean }>();
for (const [path, item] of Object.entries(source.paths as Json)) {
  for (const method of METHODS) if (item[method]) documented.set(`${method} ${path}`, { operation: item[method], mounted: item[method]["x-mounted"] === true });
}

/** `:id` and `*id` (Express) as `{id}` (OpenAPI). */
const template = (expressPath: string) => expressPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string | string[];
}

/**
 * Every route Express has registered, as "method /path" ("all" for router.all), found by walking
 * the router stack (nested routers under their mount paths). A router mounted at a documented
 * protocol base (the A2A HTTP+JSON binding, the SDK's own router) is not walked into.
 */
function registeredRoutes(stack: Layer[], prefix: string, out: Set<string>): Set<string> {
  for (const layer of stack) {
    const raw = typeof layer.rawPath === "string" ? layer.rawPath : "/";
    if (layer.route) {
      for (const method of Object.keys(layer.route.methods)) out.add(`${method === "_all" ? "all" : method} ${template(prefix + layer.route.path)}`);
    } else if (Array.isArray(layer.handle?.stack)) {
      const base = prefix + (raw === "/" ? "" : raw);
      const under = [...documented].filter(([k]) => k.split(" ")[1]!.startsWith(template(base) + "/"));
      const mountedBase = base !== "" && under.length > 0 && under.every(([, d]) => d.mounted);
      if (mountedBase) out.add(`mount ${template(base)}`);
      else registeredRoutes(layer.handle!.stack!, base, out);
    }
  }
  return out;
}

describe("the OpenAPI document", () => {
  let app: TestApp;
  let key: string;
  let brokeKey: string;
  let limitedKey: string;
  let agentId: string;
  let adminToken: string;
  let trigger: { id: string; secret: string };
  /** Documented operations a request below has exercised. */
  const exercised = new Set<string>();

  /** Sends a request meant for one documented operation and checks the answer against it. */
  async function call(method: (typeof METHODS)[number], path: string, url: string, init: RequestInit = {}): Promise<{ status: number; body: any; res: Response }> {
    const entry = documented.get(`${method} ${path}`);
    expect(entry, `${method} ${path} is documented`).toBeDefined();
    exercised.add(`${method} ${path}`);
    const res = await fetch(app.url + url, { ...init, method: method.toUpperCase(), redirect: "manual" });
    const text = await res.text();
    const where = `${method.toUpperCase()} ${url} → ${res.status} ${text.slice(0, 300)}`;
    const responses = entry!.operation.responses as Json;
    expect(Object.keys(responses), `${where}: status documented`).toContain(String(res.status));
    let at = ["paths", path, method, "responses", String(res.status)];
    let response = responses[String(res.status)] as Json;
    if (response.$ref) {
      at = (response.$ref as string).slice(2).split("/");
      response = at.reduce((o: Json, k) => o[k], source);
    }
    const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
    let body: any = text;
    if (response.content) expect(Object.keys(response.content), `${where}: content type documented`).toContain(type);
    if (type === "application/json" || type.endsWith("+json")) {
      body = JSON.parse(text);
      const schema = response.content?.[type]?.schema;
      if (schema) {
        const validate = ajv.compile({ $ref: "openapi.json" + pointer(...at, "content", type, "schema") });
        expect(validate(body), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
    return { status: res.status, body, res };
  }

  const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({ headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    app = await startTestApp();
    ({ adminToken } = await createAccount(app.url, app.operatorToken, "docs", "10"));
    const newKey = async (token: string, agent: string, rate?: number) => {
      const r = await gql(app.url, token, `mutation($a: ID!, $r: Int) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: $r) { key } }`, { a: agent, r: rate ?? null });
      return r.data!.createApiKey.key as string;
    };
    const newAgent = async (token: string, input: Json) => (await gql(app.url, token, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: input })).data!.createAgent.id as string;
    agentId = await newAgent(adminToken, { name: "docs" });
    key = await newKey(adminToken, agentId);
    limitedKey = await newKey(adminToken, agentId, 1);
    const broke = await createAccount(app.url, app.operatorToken, "broke", "0");
    brokeKey = await newKey(broke.adminToken, await newAgent(broke.adminToken, { name: "broke" }));
    const automation = await newAgent(adminToken, { name: "runner", script: "export default async () => ({ ok: true })" });
    const t = await gql(app.url, adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: automation });
    trigger = { id: t.data!.createTrigger.trigger.id, secret: t.data!.createTrigger.secret };
  });
  afterAll(async () => app?.close());

  it("is what GET /openapi.json serves, cacheable, with no credentials", async () => {
    const r = await call("get", "/openapi.json", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(source);
    expect(r.res.headers.get("cache-control")).toMatch(/public/);
    const again = await call("get", "/openapi.json", "/openapi.json", { headers: { "if-none-match": r.res.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it("documents the answers of the operations and health routes", async () => {
    expect((await call("get", "/healthz", "/healthz")).status).toBe(200);
    expect((await call("get", "/readyz", "/readyz")).status).toBe(200);
    expect((await call("get", "/metrics", "/metrics")).status).toBe(200);
  });

  it("documents the chat surface: models, completions (JSON and stream), responses, and their errors", async () => {
    const model = "provider_a/model-2.5-flash";
    expect((await call("get", "/api/v1/models", "/api/v1/models", { headers: bearer(key) })).status).toBe(200);
    expect((await call("get", "/api/v1/models", "/api/v1/models")).status).toBe(401);
    expect((await call("get", "/api/v1/models/{id}", `/api/v1/models/${model}`, { headers: { "x-api-key": key } })).status).toBe(200);
    expect((await call("get", "/api/v1/models/{id}", "/api/v1/models/nobody/nothing", { headers: bearer(key) })).status).toBe(400);

    const chat = "/api/v1/chat/completions";
    const hello = { model, messages: [{ role: "user", content: "hello" }] };
    const done = await call("post", chat, chat, json(hello, bearer(key)));
    expect(done.status).toBe(200);
    const streamed = await call("post", chat, chat, json({ ...hello, stream: true }, bearer(key)));
    expect([streamed.status, streamed.res.headers.get("content-type")]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
    expect((await call("post", chat, chat, json({ model, messages: [] }, bearer(key)))).status).toBe(400);
    expect((await call("post", chat, chat, json(hello, bearer("a2a_wrong")))).status).toBe(401);
    expect((await call("post", chat, chat, json(hello, bearer(brokeKey)))).status).toBe(402);
    expect((await call("post", chat, chat, json({ ...hello, thread_id: "thr_0000000000000000000000" }, bearer(key)))).status).toBe(404);
    await call("post", chat, chat, json(hello, bearer(limitedKey)));
    expect((await call("post", chat, chat, json(hello, bearer(limitedKey)))).status).toBe(429);

    const created = await call("post", "/api/v1/responses", "/api/v1/responses", json({ model, input: "hello" }, bearer(key)));
    expect(created.status).toBe(200);
    expect((await call("post", "/api/v1/responses", "/api/v1/responses", json({ model }, bearer(key)))).status).toBe(400);
    expect((await call("get", "/api/v1/responses/{id}", `/api/v1/responses/${created.body.id}`, { headers: bearer(key) })).status).toBe(200);
    expect((await call("get", "/api/v1/responses/{id}", "/api/v1/responses/resp_nothing", { headers: bearer(key) })).status).toBe(404);
  });

  it("documents webhooks, the job endpoints and the answer URL, with their refusals", async () => {
    const hook = "/api/triggers/{id}/webhook";
    const url = `/api/triggers/${trigger.id}/webhook`;
    const secret = { "x-trigger-secret": trigger.secret };
    const accepted = await call("post", hook, url, json({ order: 1 }, secret));
    expect(accepted.status).toBe(202);
    expect((await call("post", hook, url, json({ order: 1 }))).status).toBe(401);
    expect((await call("post", hook, "/api/triggers/trg_nothing/webhook", json({}, secret))).status).toBe(404);
    expect((await call("post", hook, url, { headers: { "content-type": "text/plain", ...secret }, body: "x" })).status).toBe(415);
    expect((await call("post", hook, url, { headers: { "content-type": "application/json", ...secret }, body: "{" })).status).toBe(400);

    const job = accepted.body.job_id as string;
    expect((await call("get", "/api/agent-run-jobs/{id}/status", `/api/agent-run-jobs/${job}/status`, { headers: secret })).status).toBe(200);
    expect((await call("get", "/api/agent-run-jobs/{id}/status", `/api/agent-run-jobs/${job}/status`)).status).toBe(404);
    // No worker runs in this app: the job stays queued, so its result is not there yet.
    expect((await call("get", "/api/agent-run-jobs/{id}/result", `/api/agent-run-jobs/${job}/result`, { headers: bearer(adminToken) })).status).toBe(409);
    expect((await call("get", "/api/runs/{id}", `/api/runs/${job}`, { headers: secret })).status).toBe(200);
    expect((await call("get", "/api/runs/{id}", "/api/runs/job_nothing", { headers: secret })).status).toBe(404);

    const answer = "/api/input-requests/{id}/answer";
    expect((await call("post", answer, "/api/input-requests/inp_nothing/answer?token=x", json("yes"))).status).toBe(404);
  });

  it("documents the A2A, MCP and OAuth endpoints by path, credentials and status", async () => {
    const card = "/api/a2a/{agentId}/.well-known/agent-card.json";
    expect((await call("get", card, `/api/a2a/${agentId}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await call("get", card, "/api/a2a/agt_nothing/.well-known/agent-card.json")).status).toBe(404);
    expect((await call("get", "/api/a2a/{agentId}/.well-known/agent.json", `/api/a2a/${agentId}/.well-known/agent.json`)).status).toBe(200);
    const rpc = { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "nothing" } };
    expect((await call("post", "/api/a2a/{agentId}", `/api/a2a/${agentId}`, json(rpc, { "a2a-version": "1.0", ...bearer(key) }))).status).toBe(200);
    expect((await call("post", "/api/a2a/{agentId}", `/api/a2a/${agentId}`, json(rpc, { "a2a-version": "1.0" }))).status).toBe(401);
    const send = { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hello" }] } };
    const rest = "/api/a2a/{agentId}/v1/message:send";
    expect((await call("post", rest, `/api/a2a/${agentId}/v1/message:send`, json(send, { "a2a-version": "1.0", ...bearer(key) }))).status).toBe(200);
    expect((await call("post", rest, `/api/a2a/${agentId}/v1/message:send`, json(send, { "a2a-version": "1.0" }))).status).toBe(401);

    const mcp = "/api/mcp/{agentId}";
    const accept = { accept: "application/json, text/event-stream" };
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "docs", version: "1" } } };
    expect((await call("post", mcp, `/api/mcp/${agentId}`, json(init, { ...accept, ...bearer(key) }))).status).toBe(200);
    expect((await call("post", mcp, `/api/mcp/${agentId}`, json(init, accept))).status).toBe(401);
    expect((await call("get", mcp, `/api/mcp/${agentId}`, { headers: bearer(key) })).status).toBe(405);
    expect((await call("delete", mcp, `/api/mcp/${agentId}`, { headers: bearer(key) })).status).toBe(405);

    for (const kind of ["mcp", "a2a"]) {
      const path = `/.well-known/oauth-protected-resource/api/${kind}/{agentId}`;
      expect((await call("get", path, path.replace("{agentId}", agentId))).status).toBe(200);
    }
    expect((await call("get", "/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server")).status).toBe(200);
    expect((await call("get", "/.well-known/openid-configuration", "/.well-known/openid-configuration")).status).toBe(200);
    expect((await call("get", "/oauth/jwks", "/oauth/jwks")).status).toBe(200);
    expect((await call("get", "/oauth/authorize", "/oauth/authorize")).status).toBe(400);
    const form = (fields: Record<string, string>): RequestInit => ({ headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
    expect((await call("post", "/oauth/token", "/oauth/token", form({ grant_type: "authorization_code", code: "x" }))).status).toBe(400);
    expect((await call("post", "/oauth/register", "/oauth/register", json({ redirect_uris: ["not a url"] }))).status).toBe(400);
    expect((await call("post", "/oauth/revoke", "/oauth/revoke", form({ token: "x" }))).status).toBe(400);
    for (const step of ["", "/login", "/confirm", "/abort"]) {
      const path = `/oauth/interaction/{uid}${step}`;
      expect((await call(step ? "post" : "get", path, `/oauth/interaction/nothing${step}`, step === "/login" ? form({ token: "x" }) : {})).status).toBe(400);
    }
  });

  it("documents GraphQL and the console", async () => {
    expect((await call("post", "/graphql", "/graphql", json({ query: "{ me { id } }" }, bearer(adminToken)))).status).toBe(200);
    expect((await call("post", "/graphql", "/graphql", json({ query: "{" }, bearer(adminToken)))).status).toBe(400);
    // 200 where the console is built (npm run build:web), 503 where it is not: both documented.
    await call("get", "/", "/", { headers: { accept: "text/html" } });
  });

  it("has every route Express registered, and no route it does not serve", () => {
    const express = app.api.server.listeners("request")[0] as Express & { router: { stack: Layer[] } };
    const registered = registeredRoutes(express.router.stack, "", new Set());
    const routed = [...documented].filter(([, d]) => !d.mounted).map(([k]) => k);
    // router.all (MCP) answers every method: its documented methods are the ones it serves.
    const all = new Set([...registered].filter((r) => r.startsWith("all ")).map((r) => r.slice(4)));
    const expressRoutes = [...registered].filter((r) => !r.startsWith("mount ") && !r.startsWith("all "));
    expect(expressRoutes.filter((r) => !documented.has(r)), "registered but not documented").toEqual([]);
    for (const path of all) expect(routed.some((k) => k.endsWith(` ${path}`)), `router.all ${path} documented`).toBe(true);
    expect(routed.filter((k) => !registered.has(k) && !all.has(k.split(" ")[1]!)), "documented but not registered (mark protocol mounts x-mounted)").toEqual([]);
    for (const mount of [...registered].filter((r) => r.startsWith("mount "))) expect([...documented.keys()].some((k) => k.split(" ")[1]!.startsWith(mount.slice(6) + "/")), mount).toBe(true);
  });

  it("was exercised, operation by operation, by the requests above", () => {
    expect([...documented.keys()].filter((k) => !exercised.has(k))).toEqual([]);
  });
});
