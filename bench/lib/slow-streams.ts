import http from "node:http";
import { firstLine, rssMb, say, sleep, startProcess } from "./harness.js";
import { createTenant, migrateWithDist, startServe } from "./gateway.js";
import type { BenchPostgres } from "./postgres.js";

/**
 * 1,000 concurrent slow SSE streams held by one API process: a mock upstream that spaces its
 * text chunks a second apart, `count` streamed chat requests opened at once on the provider_b
 * path, and the API process's resident set size (VmRSS from /proc/<pid>/status) sampled every
 * 250 ms while they are open. Target (issue 13): under 300 MB.
 */
const CHUNK_DELAY_MS = 1000;
const CHUNKS = 20;

/** `label` names the build in the heading when several are measured (bench/compare.sh runs one after the other). */
export async function runSlowStreams(o: { dir: string; root: string; pg: BenchPostgres; count: number; model: string; label?: string }): Promise<string> {
  const db = o.label ? `gw_streams_${o.label.replace(/\W/g, "_")}` : "gw_streams";
  const { line } = await firstLine((onStdout) =>
    startProcess("slow mock", process.execPath, ["--import", "@swc-node/register/esm-register", "bench/chat-mock.ts"], {
      onStdout,
      env: { MOCK_CHUNK_DELAY_MS: String(CHUNK_DELAY_MS), MOCK_CHUNKS: String(CHUNKS) },
    }),
  );
  const mockOrigin = `http://127.0.0.1:${line}`;
  await o.pg.createDatabase(db);
  migrateWithDist(o.root, o.pg.url(db));
  const gw = await startServe("gateway (streams)", o.root, {
    DATABASE_URL: o.pg.url(db),
    TEMPORAL_ADDRESS: "127.0.0.1:1",
    PROVIDER_A_API_KEY: "sk-mock",
    PROVIDER_B_API_KEY: "sk-mock",
    PROVIDER_B_BASE_URL: mockOrigin,
  });
  const tenant = await createTenant(gw.url, { model: o.model });
  const target = new URL(`${gw.url}/api/v1/chat/completions`);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const body = JSON.stringify({ model: o.model, messages: [{ role: "user", content: "Count slowly." }], max_tokens: 64, stream: true });

  let open = 0;
  let maxOpen = 0;
  let done = 0;
  let failed = 0;
  let firstChunks = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const req = http.request(
        target,
        { method: "POST", agent, headers: { "content-type": "application/json", authorization: `Bearer ${tenant.apiKey}`, "content-length": Buffer.byteLength(body) } },
        (res) => {
          if (res.statusCode !== 200) {
            failed++;
            res.resume();
            return void res.on("end", resolve);
          }
          open++;
          maxOpen = Math.max(maxOpen, open);
          let text = "";
          let first = false;
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            text += d;
            if (!first && text.includes('"content":"Hello')) {
              first = true;
              firstChunks++;
            }
          });
          res.on("end", () => {
            open--;
            if (text.includes("data: [DONE]")) done++;
            else failed++;
            resolve();
          });
          res.on("error", () => {
            open--;
            failed++;
            resolve();
          });
        },
      );
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end(body);
    });

  // Warm-up (JIT, pools, key cache) with short non-streamed calls, then the idle RSS.
  for (let i = 0; i < 200; i++) {
    const r = await fetch(target, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${tenant.apiKey}` }, body: body.replace('"stream":true', '"stream":false') });
    await r.arrayBuffer();
  }
  await sleep(1000);
  const idle = rssMb(gw.pid);
  say(`slow streams: idle RSS ${idle.toFixed(0)} MB; opening ${o.count} streams`);

  const t0 = performance.now();
  let peak = idle;
  let atAllOpen: number | undefined;
  let allOpenMs: number | undefined;
  const sampler = setInterval(() => {
    const rss = rssMb(gw.pid);
    peak = Math.max(peak, rss);
    if (atAllOpen === undefined && firstChunks >= o.count) {
      atAllOpen = rss;
      allOpenMs = performance.now() - t0;
    }
  }, 250);
  await Promise.all(Array.from({ length: o.count }, one));
  clearInterval(sampler);
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  await gw.proc.stop();
  say(`slow streams: ${done} done, ${failed} failed, max open ${maxOpen}; RSS peak ${peak.toFixed(0)} MB (idle ${idle.toFixed(0)} MB)`);

  const ok = failed === 0 && maxOpen === o.count;
  return [
    `### ${o.count.toLocaleString("en")} concurrent slow streams in one API process${o.label ? ` [${o.label}]` : ""}`,
    "",
    `The provider_b path (\`npm run serve\`, same PostgreSQL) with a mock upstream that sends one text chunk every ${CHUNK_DELAY_MS} ms, ${CHUNKS} chunks`,
    `(each stream is open about ${((CHUNK_DELAY_MS * (CHUNKS + 1)) / 1000).toFixed(0)} s). ${o.count} streamed chat requests are opened at once (each its own connection);`,
    "the API process's VmRSS (`/proc/<pid>/status`) is sampled every 250 ms. Idle = after 200 warm-up calls. Target: under 300 MB.",
    "",
    "| streams | completed with [DONE] | failed | max open at once | all streaming after | RSS idle | RSS with all open | RSS peak | target < 300 MB |",
    "|---|---|---|---|---|---|---|---|---|",
    `| ${o.count} | ${done} | ${failed} | ${maxOpen} | ${allOpenMs === undefined ? "—" : `${(allOpenMs / 1000).toFixed(1)} s`} | ${idle.toFixed(0)} MB | ${atAllOpen === undefined ? "—" : `${atAllOpen.toFixed(0)} MB`} | ${peak.toFixed(0)} MB | ${ok ? (peak < 300 ? "**met**" : "**not met**") : "not measured (streams failed)"} (run took ${elapsed.toFixed(0)} s) |`,
  ].join("\n");
}
