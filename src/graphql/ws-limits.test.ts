import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

const SUB = `subscription { jobStatusChanged { jobId status } }`;

/**
 * graphql-ws abuse limits, driven like a client would: a raw `ws` socket for the frame limit (it
 * must hold before connection_init), the graphql-ws client for sockets per token and operations
 * per socket. Small limits in the environment so the test needs few sockets.
 */
describe("graphql-ws limits: message size, sockets per token, operations per socket", () => {
  let app: TestApp;
  let token: string;
  const clients: Client[] = [];
  const wsUrl = () => `${app.url.replace(/^http/, "ws")}/graphql`;

  beforeAll(async () => {
    app = await startTestApp({ env: { GRAPHQL_WS_MAX_PAYLOAD_BYTES: "4096", GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN: "3", GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET: "4" } });
    ({ adminToken: token } = await createAccount(app.url, app.operatorToken, "ws-limits", "10"));
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await app?.close();
  });

  /** A graphql-ws client; resolves with "connected" or the close code that refused it. */
  function connect(authToken: string): { client: Client; outcome: Promise<"connected" | number> } {
    const client = createClient({ url: wsUrl(), connectionParams: { authorization: `Bearer ${authToken}` }, lazy: false, retryAttempts: 0, onNonLazyError: () => {} });
    clients.push(client);
    const outcome = new Promise<"connected" | number>((resolve) => {
      client.on("connected", () => resolve("connected"));
      client.on("closed", (e) => resolve((e as { code: number }).code));
    });
    return { client, outcome };
  }

  it("a frame over GRAPHQL_WS_MAX_PAYLOAD_BYTES, before connection_init, is refused by the WebSocket layer with close 1009", async () => {
    const socket = new WebSocket(wsUrl(), "graphql-transport-ws");
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    socket.send(JSON.stringify({ type: "connection_init", payload: { pad: "x".repeat(8192) } }));
    expect(await closed).toBe(1009);
    // A message within the limit is the protocol as usual.
    const ok = connect(token);
    expect(await ok.outcome).toBe("connected");
    await ok.client.dispose();
  });

  it("one token opens GRAPHQL_WS_MAX_SOCKETS_PER_TOKEN sockets; the next is closed with 4429, another token is unaffected, a freed place is reusable", async () => {
    const open = [connect(token), connect(token), connect(token)];
    expect(await Promise.all(open.map((o) => o.outcome))).toEqual(["connected", "connected", "connected"]);
    expect(await connect(token).outcome).toBe(4429);
    const { adminToken: other } = await createAccount(app.url, app.operatorToken, "ws-other", "10");
    expect(await connect(other).outcome).toBe("connected");
    await open[0]!.client.dispose();
    // The server notices the close asynchronously: poll until the place is free.
    let again: "connected" | number = 0;
    for (let i = 0; i < 50 && again !== "connected"; i++) {
      again = await connect(token).outcome;
      if (again !== "connected") await new Promise((r) => setTimeout(r, 100));
    }
    expect(again).toBe("connected");
    for (const c of clients.splice(0)) await c.dispose();
  });

  it("a socket runs GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_SOCKET operations; the next gets TOO_MANY_SUBSCRIPTIONS and the socket stays usable", async () => {
    // Wait for the previous test's sockets to be gone on the server.
    let first: { client: Client; outcome: Promise<"connected" | number> } | undefined;
    for (let i = 0; i < 50; i++) {
      first = connect(token);
      if ((await first.outcome) === "connected") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const client = first!.client;
    const errors: unknown[][] = [];
    const stops: (() => void)[] = [];
    const subscribe = (): number => {
      const index = errors.push([]) - 1;
      stops.push(client.subscribe({ query: SUB }, { next: () => {}, error: (e) => errors[index]!.push(e), complete: () => {} }));
      return index;
    };
    // The server counts an operation as soon as its message arrives, in order on the socket.
    for (let i = 0; i < 4; i++) subscribe();
    const extra = subscribe();
    await waitUntil(() => errors[extra]!.length > 0, 30_000, "the fifth operation's error");
    const refused = errors[extra]![0] as { extensions?: { code?: string } }[];
    expect(refused?.[0]?.extensions?.code).toBe("TOO_MANY_SUBSCRIPTIONS");
    // Completing one frees a place on the same socket; the other four were never refused.
    stops[0]!();
    const again = subscribe();
    await new Promise((r) => setTimeout(r, 1000));
    expect(errors.slice(0, 4)).toEqual([[], [], [], []]);
    expect(errors[again]).toEqual([]);
    for (const stop of stops) stop();
  });
});
