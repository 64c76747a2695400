import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { loadConfig } from "../config/config.js";
import { createOutboundSender, type OutboundSender } from "./send.js";

/** The sender alone against local servers: no redirect followed, a TLS handshake that never comes, a capped read. */
describe("outbound sender", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let silent: Server;
  const sockets: Socket[] = [];
  let send: OutboundSender;

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    // Accepts TCP connections and never says a word: the TLS handshake never completes.
    silent = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.2", r));
    const config = loadConfig({
      NODE_ENV: "test", DATABASE_URL: "postgres://x/y", TEMPORAL_ADDRESS: "127.0.0.1:7233", OPERATOR_TOKEN: "opr_" + "x".repeat(40), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"),
      EGRESS_ALLOW_ADDRESSES: "127.0.0.2", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }), EGRESS_CA_FILE: ca.caFile,
      OUTBOUND_CONNECT_TIMEOUT_MS: "300", OUTBOUND_TIMEOUT_MS: "20000", OUTBOUND_MAX_RESPONSE_BYTES: "1000",
    });
    send = createOutboundSender(config.egress, config.outbound);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent?.close(r));
    await hooks?.close();
    ca?.cleanup();
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    const r = await send({ url: `https://hooks.test:${hooks.port}/redirect`, headers: {}, body: "{}" });
    expect(r).toMatchObject({ statusCode: 302, refused: false });
    expect(r.error).toMatch(/redirects are not followed/);
    expect(hooks.to("/ok")).toHaveLength(0);
  });

  it("gives up on a handshake that never comes at the connect timeout, not the answer timeout", async () => {
    const r = await send({ url: `https://127.0.0.2:${(silent.address() as { port: number }).port}/`, headers: {}, body: "{}" });
    expect(r).toMatchObject({ statusCode: null, refused: false });
    expect(r.error).toMatch(/could not connect/);
  });

  it("reads at most OUTBOUND_MAX_RESPONSE_BYTES of an endless body and keeps the answer", async () => {
    const r = await send({ url: `https://hooks.test:${hooks.port}/stream`, headers: {}, body: "{}" });
    expect(r).toMatchObject({ statusCode: 200, error: null, responseBytes: 1000 });
    expect(r.responseExcerpt).toHaveLength(1000);
  });

  it("refuses plain http:// without EGRESS_ALLOW_PRIVATE", async () => {
    const r = await send({ url: `http://hooks.test:${hooks.port}/ok`, headers: {}, body: "{}" });
    expect(r).toMatchObject({ statusCode: null, refused: true });
  });
});
