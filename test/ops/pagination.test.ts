import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { createClient } from "graphql-ws";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { allPages, must, newAgent, newTrigger, postWebhook, type Page } from "../helpers/ops.js";

/** Relay connections and the query-cost limit, black-box through GraphQL (docs/guides/graphql.md). */
describe("pagination and query cost", () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let trigger: { id: string; secret: string };
  let otherTrigger: { id: string; secret: string };
  const JOBS = `query($first: Int, $after: String, $filter: JobFilter) {
    jobs(first: $first, after: $after, filter: $filter) { edges { cursor node { id status triggerId createdAt } } pageInfo { hasNextPage endCursor } } }`;
  const jobsPage = (variables: Record<string, unknown>) => must<{ jobs: Page<{ id: string; status: string; triggerId: string; createdAt: string }> }>(app.url, admin, JOBS, variables).then((d) => d.jobs);

  beforeAll(async () => {
    // No worker: the jobs stay queued, so the lists are what this test wrote.
    app = await startTestApp();
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    agentId = await newAgent(app.url, admin);
    trigger = await newTrigger(app.url, admin, agentId);
    otherTrigger = await newTrigger(app.url, admin, agentId);
    // Concurrent webhooks land in the same group commit: many share a created_at.
    const posts = [];
    for (let i = 0; i < 130; i++) posts.push(postWebhook(app.url, i % 5 === 0 ? otherTrigger : trigger, { i }));
    for (const r of await Promise.all(posts)) expect(r.status).toBe(202);
  });
  afterAll(async () => app?.close());

  it("jobs: default page 50, every job exactly once across pages, newest first", async () => {
    const first = await jobsPage({});
    expect(first.edges).toHaveLength(50);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const { nodes, pages } = await allPages((after) => jobsPage({ first: 17, after }));
    expect(pages).toBe(Math.ceil(130 / 17));
    expect(new Set(nodes.map((n) => n.id)).size).toBe(130);
    const times = nodes.map((n) => Date.parse(n.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it("a page stays stable while new jobs arrive: following the cursor neither repeats nor skips older jobs", async () => {
    const before = (await allPages((after) => jobsPage({ first: 200, after }))).nodes.map((n) => n.id);
    const page1 = await jobsPage({ first: 40 });
    for (let i = 0; i < 5; i++) expect((await postWebhook(app.url, trigger, { late: i })).status).toBe(202);
    const tail = await allPages((after) => jobsPage({ first: 40, after: after ?? page1.pageInfo.endCursor }));
    expect([...page1.edges.map((e) => e.node.id), ...tail.nodes.map((n) => n.id)]).toEqual(before);
  });

  it("filters: trigger, agent, status (the failed-jobs view) and a time range", async () => {
    const byTrigger = await allPages((after) => jobsPage({ first: 200, after, filter: { triggerId: otherTrigger.id } }));
    expect(byTrigger.nodes).toHaveLength(26);
    expect(byTrigger.nodes.every((n) => n.triggerId === otherTrigger.id)).toBe(true);
    expect((await jobsPage({ filter: { status: "FAILED" } })).edges).toHaveLength(0);
    expect((await jobsPage({ first: 200, filter: { status: "QUEUED", agentId } })).edges.length).toBeGreaterThanOrEqual(130);
    expect((await jobsPage({ filter: { agentId: "agt_unknown" } })).edges).toHaveLength(0);
    expect((await jobsPage({ filter: { createdAfter: new Date(Date.now() + 3600_000).toISOString() } })).edges).toHaveLength(0);
    expect((await jobsPage({ filter: { createdBefore: new Date(Date.now() - 3600_000).toISOString() } })).edges).toHaveLength(0);
  });

  it("Trigger.jobs pages the trigger's jobs; Trigger.logs still answers", async () => {
    const q = `query($id: ID!, $after: String) { trigger(id: $id) { logs(first: 3) { jobId } jobs(first: 10, after: $after) { edges { node { id triggerId } } pageInfo { hasNextPage endCursor } } } }`;
    const { nodes } = await allPages<{ id: string }>(async (after) => (await must(app.url, admin, q, { id: otherTrigger.id, after })).trigger.jobs);
    expect(nodes).toHaveLength(26);
    const logs = (await must(app.url, admin, q, { id: otherTrigger.id })).trigger.logs;
    expect(logs.map((l: { jobId: string }) => l.jobId)).toEqual(nodes.slice(0, 3).map((n: { id: string }) => n.id));
  });

  it("ledger pages newest first", async () => {
    const d = await must(app.url, admin, `{ ledger(first: 5) { edges { node { id kind amount } } pageInfo { hasNextPage } } }`);
    expect(d.ledger.edges[0].node).toMatchObject({ kind: "initial_balance", amount: "10.000000" });
    expect(d.ledger.pageInfo.hasNextPage).toBe(false);
  });

  it("first is 0..200; a bad first or cursor is BAD_USER_INPUT naming the argument, never a 500", async () => {
    for (const first of [201, -1, 100000]) {
      const r = await gql(app.url, admin, JOBS, { first });
      expect(r.status).toBe(200);
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "first" });
    }
    const zero = await jobsPage({ first: 0 });
    expect(zero.edges).toHaveLength(0);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => Buffer.from(s).toString("base64url")),
          fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v)).toString("base64url")),
          fc.tuple(fc.double(), fc.string()).map((v) => Buffer.from(JSON.stringify(v)).toString("base64url")),
          fc.tuple(fc.integer(), fc.string()).map((v) => Buffer.from(JSON.stringify(v)).toString("base64url")),
        ),
        async (after) => {
          const r = await gql(app.url, admin, JOBS, { first: 5, after });
          expect(r.status).toBeLessThan(500);
          if (r.errors) expect(r.errors[0]!.extensions?.code).toBe("BAD_USER_INPUT");
        },
      ),
      { numRuns: 60 },
    );
  });

  it("Thread.messages: a cursor with a sequence number beyond PostgreSQL's integer is BAD_USER_INPUT, never INTERNAL_SERVER_ERROR", async () => {
    // A thread of this account (chat would make one; there is no upstream in this test).
    await app.runtime.pool.query(
      "insert into threads (id, account_id, agent_id, message_count, created_at, updated_at) select 'thr_cursorbounds', account_id, id, 0, now(), now() from agents where id = $1",
      [agentId],
    );
    const MESSAGES = `query($after: String) { thread(id: "thr_cursorbounds") { messages(first: 5, after: $after) { edges { cursor } } } }`;
    const INT_MAX = 2 ** 31 - 1;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ min: INT_MAX + 1, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -INT_MAX - 2 })), async (seq) => {
        const r = await gql(app.url, admin, MESSAGES, { after: Buffer.from(JSON.stringify([seq])).toString("base64url") });
        expect(r.errors?.[0]?.extensions, String(seq)).toMatchObject({ code: "BAD_USER_INPUT", param: "after" });
      }),
      { numRuns: 30 },
    );
    const edge = await gql(app.url, admin, MESSAGES, { after: Buffer.from(JSON.stringify([INT_MAX])).toString("base64url") });
    expect(edge.data?.thread.messages.edges).toEqual([]);
  });

  it("query cost is limited, counting each connection's rows: the error names the limit", async () => {
    const nested = `{ jobs(first: 200) { edges { node { id } } } agents { threads(first: 200) { edges { node { messages(first: 200) { edges { node { content } } } } } } } }`;
    const r = await gql(app.url, admin, nested);
    expect(r.status).toBe(400);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COSTLY", limit: app.config.graphqlMaxCost });
    expect(r.errors?.[0]?.message).toContain("GRAPHQL_MAX_COST");
    expect(r.data ?? null).toBeNull();
    // Variables count too: the same query is cheap with a small page (a message's content weighs up to 4 MB: see below).
    const q = `query($n: Int) { agents { threads(first: $n) { edges { node { messages(first: $n) { edges { node { content } } } } } } } }`;
    expect((await gql(app.url, admin, q, { n: 200 })).errors?.[0]?.extensions?.code).toBe("QUERY_TOO_COSTLY");
    expect((await gql(app.url, admin, q, { n: 5 })).errors).toBeUndefined();
  });

  it("large fields carry their weight: a page of results, logs and payloads is refused with QUERY_TOO_COSTLY; the console's own queries pass", async () => {
    // 200 rows of fields that may hold 1 MiB, 256 KiB, 1 MiB and 1 MiB each: at most ~650 MiB to read and send.
    const heavy = `{ jobs(first: 200) { edges { node { id result logs audit { payload result } } } } }`;
    const r = await gql(app.url, admin, heavy);
    expect(r.status).toBe(400);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COSTLY", limit: app.config.graphqlMaxCost });
    expect(r.errors?.[0]?.message).toMatch(/large fields/);
    // Cheap fields of the same rows, and the large ones of a small page, are fine.
    expect((await gql(app.url, admin, `{ jobs(first: 200) { edges { node { id status error attempts cost } } } }`)).errors).toBeUndefined();
    expect((await gql(app.url, admin, `{ jobs(first: 10) { edges { node { id result logs audit { payload result } } } } }`)).errors).toBeUndefined();

    // The console's API module (web/src/api) against this server: none of its reads is over the limit.
    // The cost is checked before execution, so ids that do not exist price the same as real ones.
    const fetchOf = globalThis.fetch;
    vi.stubGlobal("sessionStorage", { getItem: () => admin, setItem: () => {}, removeItem: () => {} });
    vi.stubGlobal("fetch", (input: string, init?: RequestInit) => fetchOf(input.startsWith("/") ? `${app.url}${input}` : input, init));
    try {
      const consoleApi = "../../web/src/api/index.js"; // not resolved by tsc: the console is typed against the DOM
      const { api } = (await import(/* @vite-ignore */ consoleApi)) as { api: Record<string, (...args: unknown[]) => Promise<unknown>> };
      expect(await api.me!()).toMatchObject({ name: "acme" }); // the harness reaches this server with this token
      const [job] = (await jobsPage({ first: 1 })).edges.map((e) => e.node.id);
      const reads: [string, unknown[]][] = [
        ["me", []], ["settings", []], ["adminTokens", []], ["agents", []], ["agent", [agentId]], ["triggers", []], ["trigger", [trigger.id, 20]], ["triggerLogs", [trigger.id, 20]],
        ["jobs", [{}, 25, null]], ["job", [job]], ["jobAudit", [job]], ["thread", ["thr_none"]], ["threadMessages", ["thr_none", 50, null]], ["agentThreads", [agentId, 20, null]],
        ["usage", ["2026-01-01T00:00:00Z", "2026-12-31T00:00:00Z", ["AGENT", "MODEL"]]], ["ledger", [50, null]],
      ];
      for (const [name, args] of reads) {
        const code = await api[name]!(...args).then(() => "ok", (e: { code?: string }) => e.code);
        expect(code, name).not.toBe("QUERY_TOO_COSTLY");
      }
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("graphql-ws operations meet the same cost limit", async () => {
    const c = createClient({ url: `${app.url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: `Bearer ${admin}` }, retryAttempts: 0 });
    try {
      const run = (query: string) =>
        new Promise<{ data?: unknown; errors?: { extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
          let result: { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] } = {};
          c.subscribe({ query }, { next: (v) => (result = v as typeof result), error: (e) => resolve({ errors: Array.isArray(e) ? e : [{ extensions: { error: String(e) } }] }), complete: () => resolve(result) });
          void reject;
        });
      const costly = await run(`{ agents { threads(first: 200) { edges { node { messages(first: 200) { edges { node { content } } } } } } } }`);
      expect(costly.errors?.[0]?.extensions).toMatchObject({ code: "QUERY_TOO_COSTLY", limit: app.config.graphqlMaxCost });
      expect(costly.errors?.[0]?.extensions).not.toHaveProperty("http");
      const cheap = await run(`{ jobs(first: 2) { edges { node { id } } } }`);
      expect(cheap.errors).toBeUndefined();
    } finally {
      await c.dispose();
    }
  });
});
