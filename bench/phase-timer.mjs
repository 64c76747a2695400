// Where a request's time goes inside the gateway, phase by phase, timed in the process itself.
//
// Load it into the gateway (`BENCH_GATEWAY_NODE_ARGS="--import ./bench/phase-timer.mjs"`, path relative to
// the gateway's working directory, the repository) and run a bench; every 2 s it appends the means
// of the requests finished since to `$BENCH_PHASE_DIR/phases-<pid>.jsonl` (default: the system's
// temporary directory). `node bench/phase-timer.mjs <file>` prints the run's means per route.
//
// Phases, in µs: from the request's start to the turn's open statement (`preOpen`), the open
// (`open`: sent to answered), to the upstream request (`openToUp`), the upstream call (`up`), to the
// finish statement (`upToFinish`), the finish (`finish`, its durable commit included), and from its
// answer to the response's end (`tail`). Requests without all of them (errors, reads) are skipped.
// Besides them, `idle`: from the response's end to the next request's start on the same
// connection (within 50 ms), which a closed loop at one connection spends in the client, the
// network, and any work of the server that keeps its event loop from reading that request.
// The routes are told apart by path only, so run one mode at a time (`BENCH_MODES=non-stream`).
import { AsyncLocalStorage } from "node:async_hooks";
import dc from "node:diagnostics_channel";
import { appendFileSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const PHASES = ["preOpen", "open", "openToUp", "up", "upToFinish", "finish", "tail"];

function summarise(file) {
  const total = {};
  for (const line of readFileSync(file, "utf8").trim().split("\n")) {
    for (const [route, b] of Object.entries(JSON.parse(line).routes)) {
      const t = (total[route] ??= { n: 0, sums: {} });
      t.n += b.n;
      for (const [p, v] of Object.entries(b.sums)) t.sums[p] = (t.sums[p] ?? 0) + v;
    }
  }
  const routes = Object.keys(total);
  console.log(["phase (µs)", ...routes.map((r) => `${r} (${total[r].n})`)].join("\t"));
  for (const p of [...PHASES, "total"]) console.log([p, ...routes.map((r) => (total[r].sums[p] / total[r].n).toFixed(0))].join("\t"));
  console.log(["idle", ...routes.map((r) => (total[r].sums.idleN ? (total[r].sums.idle / total[r].sums.idleN).toFixed(0) : "—"))].join("\t"));
}

function install() {
  const pg = createRequire(join(process.cwd(), "package.json"))("pg");
  const now = () => Number(process.hrtime.bigint()) / 1000;
  const current = new AsyncLocalStorage();
  const finished = [];
  const routeOf = (url) =>
    url.startsWith("/api/v1/chat/completions") ? "chat" : /^\/api\/a2a\/[^/]+\/v1\//.test(url) ? "a2a-rest" : /^\/api\/a2a\/[^/?]+\/?(\?|$)/.test(url) ? "a2a-jsonrpc" : url.startsWith("/api/mcp") ? "mcp" : undefined;

  dc.subscribe("http.server.request.start", ({ request, socket }) => {
    const route = routeOf(request.url);
    const start = now();
    const before = socket?.phaseLast;
    if (before && start - before.end < 50_000) before.at.next = start;
    const r = route ? { route, start, at: {} } : undefined;
    request.phaseTimes = r;
    current.enterWith(r);
  });
  dc.subscribe("http.server.response.finish", ({ request }) => {
    const r = request.phaseTimes;
    if (!r) return;
    r.end = now();
    finished.push(r);
    if (request.socket) request.socket.phaseLast = r;
  });
  dc.subscribe("http.client.request.start", ({ request }) => {
    const r = current.getStore();
    request.phaseTimes = r;
    if (r) r.at.upStart ??= now();
  });
  dc.subscribe("http.client.response.finish", ({ request }) => {
    const r = request.phaseTimes;
    if (r) r.at.upEnd ??= now();
  });

  // The turn's open and finish statements are named (src/db/statement.ts): the first of each.
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, callback) {
    const r = current.getStore();
    const which = r && typeof config?.name === "string" ? (/open/.test(config.name) ? "open" : /finish/.test(config.name) ? "finish" : undefined) : undefined;
    if (!which || r.at[`${which}Sent`]) return query.call(this, config, values, callback);
    r.at[`${which}Sent`] = now();
    const answered = () => (r.at[`${which}Done`] ??= now());
    const wrap = (f) => function (...args) { answered(); return f.apply(this, args); };
    if (typeof values === "function") values = wrap(values);
    else if (typeof callback === "function") callback = wrap(callback);
    const result = query.call(this, config, values, callback);
    if (typeof result?.then === "function") result.then(answered, () => {});
    return result;
  };

  const file = join(process.env.BENCH_PHASE_DIR ?? tmpdir(), `phases-${process.pid}.jsonl`);
  setInterval(() => {
    const routes = {};
    // Those of the last 100 ms wait for the next round: their next request may not have come yet.
    const cut = now() - 100_000;
    const ready = finished.filter((r) => r.end < cut);
    finished.splice(0, ready.length);
    for (const r of ready) {
      const a = r.at;
      if (!a.openSent || !a.openDone || !a.upStart || !a.upEnd || !a.finishSent || !a.finishDone) continue;
      const times = [a.openSent - r.start, a.openDone - a.openSent, a.upStart - a.openDone, a.upEnd - a.upStart, a.finishSent - a.upEnd, a.finishDone - a.finishSent, r.end - a.finishDone];
      const b = (routes[r.route] ??= { n: 0, sums: {} });
      b.n++;
      PHASES.forEach((p, i) => (b.sums[p] = (b.sums[p] ?? 0) + times[i]));
      b.sums.total = (b.sums.total ?? 0) + (r.end - r.start);
      if (a.next) {
        b.sums.idle = (b.sums.idle ?? 0) + (a.next - r.end);
        b.sums.idleN = (b.sums.idleN ?? 0) + 1;
      }
    }
    if (Object.keys(routes).length) appendFileSync(file, JSON.stringify({ at: new Date().toISOString(), routes }) + "\n");
  }, 2000).unref();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) summarise(process.argv[2]);
else install();
