import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";
import { BENCHES, commandLine, firstLine, loadNow, main, provenance, say, startProcess, writeSection } from "./lib/harness.js";

/**
 * `npm run bench:upstream`: the upstream HTTP client alone (src/providers/upstream-http.ts): CPU time per call, for
 * before/after comparisons of a change too small to see through the whole chat path's noise
 * (`COMPARE_UPSTREAM=1 bench/compare.sh <base> <head>`). One process loads the client of every
 * build (BENCH_GATEWAYS "label=path,…", default this checkout) and calls the zero-think-time mock
 * (bench/chat-mock.ts, another process) in rounds, build after build, so machine noise hits all
 * alike: a non-stream call read with `text()` and a stream call read with `readSse`. The figure is
 * this process's user + system CPU time (`process.cpuUsage`) per call — the mock's work is not in
 * it — median over the rounds.
 *
 * Env: BENCH_CALLS per round (2000), BENCH_ROUNDS (9), BENCH_SECTION (a label: the run's own section), BENCH_WRITE=0.
 */
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const BODY = { model: "mock-claude", max_tokens: 64, messages: [{ role: "user", content: "Say hello in five words." }] };

type Client = typeof import("../src/providers/upstream-http.js");

async function calls(client: Client, url: string, stream: boolean, n: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    await client.callUpstream({
      provider: "bench",
      url,
      headers: { "x-api-key": "sk-mock", "anthropic-version": "2023-06-01" },
      body: stream ? { ...BODY, stream: true } : BODY,
      timeoutMs: 10_000,
      maxRetries: 0,
      canRetry: () => false,
      handle: async (res) => {
        if (!stream) {
          JSON.parse(await res.text());
          return;
        }
        for await (const ev of client.readSse(res.body)) if (ev.event === "message_stop") break;
      },
    });
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await main(async () => {
  const loadAtStart = loadNow();
  const specs = (process.env.BENCH_GATEWAYS ?? `this=${process.cwd()}`).split(",").map((s) => {
    const [label, path] = s.split("=");
    return { label: label!, root: resolve(path!) };
  });
  const clients = await Promise.all(
    specs.map(async (s) => ({ ...s, client: (await import(pathToFileURL(join(s.root, "src/providers/upstream-http.ts")).href)) as Client })),
  );
  const { line } = await firstLine((onStdout) => startProcess("mock", process.execPath, ["--import", "@swc-node/register/esm-register", "bench/chat-mock.ts"], { onStdout }));
  const url = `http://127.0.0.1:${line}/v1/messages`;
  const results = new Map<string, number[]>();
  for (const c of clients) for (const stream of [false, true]) await calls(c.client, url, stream, 500); // warm-up (JIT, pooled connection)
  for (let r = 0; r < ROUNDS; r++) {
    for (const stream of [false, true]) {
      for (const c of r % 2 ? [...clients].reverse() : clients) {
        const ms = await calls(c.client, url, stream, CALLS);
        const key = `${c.label}|${stream}`;
        results.set(key, [...(results.get(key) ?? []), ms]);
      }
    }
    say(`round ${r + 1}/${ROUNDS}: ${[...results].map(([k, v]) => `${k} ${v[v.length - 1]!.toFixed(4)} ms`).join(", ")}`);
  }
  const rows = clients.flatMap((c) =>
    [false, true].map((stream) => {
      const xs = results.get(`${c.label}|${stream}`)!;
      return `| ${c.label} | ${stream ? "stream (readSse)" : "non-stream (text)"} | ${median(xs).toFixed(4)} | ${Math.min(...xs).toFixed(4)} – ${Math.max(...xs).toFixed(4)} |`;
    }),
  );
  writeSection(
    BENCHES.upstream,
    [
      provenance(commandLine("bench:upstream"), loadAtStart),
      "",
      `CPU time (user + system) of the calling process per upstream call to the zero-think-time mock (Anthropic format), ${ROUNDS} rounds of ${CALLS} sequential calls per build`,
      "and mode, builds alternating; median and range over the rounds. Keep-alive connection, one request body, the answer read whole (non-stream) or as SSE events.",
      "",
      "| build | mode | CPU ms / call (median) | range over rounds |",
      "|---|---|---|---|",
      ...rows,
    ].join("\n"),
  );
});
