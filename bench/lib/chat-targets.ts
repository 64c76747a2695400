/**
 * The targets tables of `npm run bench:chat`: each target of issues 13, 18, 20 and 21 with its
 * verdict, computed from the cells of the same run. A target whose cells were not measured (its
 * rows were not selected with BENCH_TARGETS / BENCH_CONNECTIONS) or had any error is "not measured".
 */

export interface Cell {
  /** Good answers per second (errors are never throughput). */
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx answers, 2xx answers without what the request needed, connection errors and timeouts. */
  errors: number;
  total: number;
  /** CPU time (user + system) of the target's process per completed request, ms. */
  cpuMs?: number;
}

export interface Measured {
  levels: number[];
  /** The label of the build the targets are about (compare runs: the head build). */
  head: string;
  /** Accounts of the spread rows. */
  tenants: number;
  get(id: string, connections: number, stream: boolean): Cell | undefined;
  /** Mean over the direct call to the mock in the wire format the target speaks upstream, ms. */
  added(id: string, connections: number, stream: boolean): number | undefined;
  /** The same, for each slice of the cell (measured in turns with the other targets' slices), when it was measured in slices. */
  addedBySlice?(id: string, connections: number, stream: boolean): number[] | undefined;
}

const f2 = (x: number) => x.toFixed(2);
const mode = (s: boolean) => (s ? "stream" : "non-stream");
const verdictOf = (ok: boolean | undefined) => (ok === undefined ? "not measured" : ok ? "**met**" : "**not met**");

/**
 * How the ratio varies from one round of slices to the next: the run's noise, beside its verdict
 * (which is judged on the whole cell). Empty when the cells were not measured in slices.
 */
function sliceSpread(x: number[] | undefined, a: number[] | undefined, bound: number): string {
  if (!x || !a || x.length < 2 || x.length !== a.length) return "";
  const ratios = x.map((v, i) => v / a[i]!).sort((p, q) => p - q);
  const median = ratios.length % 2 ? ratios[(ratios.length - 1) / 2]! : (ratios[ratios.length / 2 - 1]! + ratios[ratios.length / 2]!) / 2;
  const within = ratios.filter((r) => r <= bound).length;
  const [low, high] = ratioInterval(x, a);
  return `; by slice: median ${f2(median)}×, ${f2(ratios[0]!)}–${f2(ratios[ratios.length - 1]!)}×, ${within} of ${ratios.length} within; 95 % interval ${f2(low)}–${f2(high)}×`;
}

/**
 * A 95 % percentile-bootstrap interval of the cell's ratio (Σ x / Σ a over its slices): rounds of
 * slices drawn with replacement, each round's pair kept together (its slices were measured in the
 * same turn of the machine). What the run says about the ratio itself, beyond its point estimate:
 * a bound is established by a run only when the interval's top is within it. Seeded, so one
 * run's output is reproducible from its slices.
 */
export function ratioInterval(x: number[], a: number[], draws = 4000): [number, number] {
  let seed = 0x9e3779b9;
  // mulberry32: a small deterministic generator, enough for resampling indices.
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = x.length;
  const ratios: number[] = [];
  for (let d = 0; d < draws; d++) {
    let sx = 0;
    let sa = 0;
    for (let k = 0; k < n; k++) {
      const i = Math.floor(random() * n);
      sx += x[i]!;
      sa += a[i]!;
    }
    ratios.push(sx / sa);
  }
  ratios.sort((p, q) => p - q);
  return [ratios[Math.floor(0.025 * draws)]!, ratios[Math.ceil(0.975 * draws) - 1]!];
}

export function targetsTables(m: Measured): string {
  const lo = m.levels[0]!;
  const hi = m.levels[m.levels.length - 1]!;
  const ours = `gw-b:${m.head}`;
  const usable = (id: string, c: number, s: boolean) => {
    const r = m.get(id, c, s);
    return r && r.errors === 0 ? r : undefined;
  };
  const added = (id: string, c: number, s: boolean) => (usable(id, c, s) ? m.added(id, c, s) : undefined);
  const why = (ids: string[], c: number, s: boolean) => {
    const failed = ids.filter((id) => m.get(id, c, s) && !usable(id, c, s));
    return failed.length ? `errors in ${failed.join(", ")}` : "—";
  };

  // Issue 21: | row | ours | reference | goal | verdict |
  const rows21: string[] = [];
  const row21 = (label: string, a: string | undefined, b: string | undefined, goal: string, ok: boolean | undefined, missing: string) =>
    rows21.push(`| ${label} | ${a ?? missing} | ${b ?? "—"} | ${goal} | ${verdictOf(ok)} |`);
  /** Added mean of `id` against `ref`'s at `c` connections: ≤ `bound` × ref's. */
  const addedVs = (label: string, id: string, ref: string, refName: string, c: number, s: boolean, bound: number) => {
    const a = added(id, c, s);
    const b = added(ref, c, s);
    const goal = bound === 1 ? `≤ ${refName}'s` : `≤ ${bound}× ${refName}'s`;
    row21(label, a === undefined ? undefined : `+${f2(a)} ms${b !== undefined ? ` (${f2(a / b)}×)` : ""}`, b === undefined ? undefined : `+${f2(b)} ms`, goal, a !== undefined && b !== undefined ? a <= bound * b : undefined, why([id, ref], c, s));
  };
  /** Throughput of `id` against `ref`'s at `c` connections: ≥ `bound` × ref's. */
  const rpsVs = (label: string, id: string, ref: string, refName: string, c: number, s: boolean, bound: number) => {
    const a = usable(id, c, s);
    const b = usable(ref, c, s);
    const goal = bound === 1 ? `≥ ${refName}'s` : `≥ ${bound}× ${refName}'s`;
    row21(label, a && `${a.rps.toFixed(0)} req/s${b ? ` (${f2(a.rps / b.rps)}×)` : ""}`, b && `${b.rps.toFixed(0)} req/s`, goal, a && b ? a.rps >= bound * b.rps : undefined, why([id, ref], c, s));
  };

  addedVs(`added mean, ${lo} connection(s), non-stream (one account)`, ours, "portkey-b", "Portkey", lo, false, 1);
  rpsVs(`throughput, ${hi} connections, non-stream (one account)`, ours, "portkey-b", "Portkey", hi, false, 1);
  rpsVs(`throughput, ${hi} connections, stream (one account)`, ours, "portkey-b", "Portkey", hi, true, 1);
  {
    const a = added(ours, lo, false);
    const l = added("litellm-b", lo, false);
    row21(`LiteLLM's added mean ÷ ours, ${lo} connection(s), non-stream`, a === undefined || l === undefined ? undefined : `${f2(l / a)}×`, l === undefined ? undefined : `LiteLLM +${f2(l)} ms`, "≥ 5×", a !== undefined && l !== undefined ? l >= 5 * a : undefined, why([ours, "litellm-b"], lo, false));
  }
  const spread = `gw-b${m.tenants}:${m.head}`;
  for (const [cont, base, who] of [
    [`gw-b-cont:${m.head}`, ours, "one account"],
    [`gw-b${m.tenants}-cont:${m.head}`, spread, `${m.tenants} accounts`],
  ] as const) {
    for (const s of [false, true]) {
      if (!m.get(cont, lo, s) && !m.get(base, lo, s)) continue; // neither selected: no rows
      addedVs(`continuation: added mean, ${lo} connection(s), ${mode(s)} (${who})`, cont, base, "a new thread", lo, s, 1.1);
      for (const c of m.levels.filter((x) => x >= 10)) rpsVs(`continuation: throughput, ${c} connections, ${mode(s)} (${who})`, cont, base, "a new thread", c, s, 0.9);
    }
  }
  // The issue's title: ahead of Portkey for continued threads too (Portkey's client resends the history).
  for (const s of [false, true]) {
    if (!m.get(`gw-b-cont:${m.head}`, lo, s) && !m.get("portkey-b-cont", lo, s)) continue;
    addedVs(`continuation: added mean, ${lo} connection(s), ${mode(s)}, against Portkey's continuation`, `gw-b-cont:${m.head}`, "portkey-b-cont", "Portkey", lo, s, 1);
    rpsVs(`continuation: throughput, ${hi} connections, ${mode(s)}, against Portkey's continuation`, `gw-b-cont:${m.head}`, "portkey-b-cont", "Portkey", hi, s, 1);
  }
  for (const s of [false, true]) {
    if (!m.get(`gw-b-toolrt:${m.head}`, lo, s)) continue;
    addedVs(`tools round trip on a thread: added mean per request, ${lo} connection(s), ${mode(s)}`, `gw-b-toolrt:${m.head}`, ours, "a new thread", lo, s, 1.1);
    addedVs(`tools round trip: added mean per request, ${lo} connection(s), ${mode(s)}, against Portkey's`, `gw-b-toolrt:${m.head}`, "portkey-b-toolrt", "Portkey", lo, s, 1);
  }

  // Issues 13, 18 and 20: the stream side of issue 13, and what the agent protocols, the key controls and a fallback add to the chat path.
  const lines: string[] = [];
  const verdict = (label: string, ok: boolean | undefined, detail: string) => lines.push(`| ${label} | ${verdictOf(ok)} | ${detail} |`);
  {
    const a = added(ours, lo, true);
    const p = added("portkey-b", lo, true);
    verdict(`added mean at ${lo} connection(s) ≤ Portkey's (stream, provider_b vs Portkey's Anthropic provider)`, a !== undefined && p !== undefined ? a <= p : undefined,
      a !== undefined && p !== undefined ? `ours +${f2(a)} ms, Portkey +${f2(p)} ms: ${f2(a / p)}× Portkey's` : why([ours, "portkey-b"], lo, true));
    const l = added("litellm-b", lo, true);
    verdict(`LiteLLM's added mean at ${lo} connection(s) ≥ 5× ours (stream)`, a !== undefined && l !== undefined ? l >= 5 * a : undefined,
      a !== undefined && l !== undefined ? `LiteLLM +${f2(l)} ms, ours +${f2(a)} ms: ${f2(l / a)}×` : why([ours, "litellm-b"], lo, true));
  }
  const versus = (id: string, s: boolean, bound: number, label: string) => {
    const a = added(ours, lo, s);
    const x = added(`${id}:${m.head}`, lo, s);
    const spread = a !== undefined && x !== undefined ? sliceSpread(m.addedBySlice?.(`${id}:${m.head}`, lo, s), m.addedBySlice?.(ours, lo, s), bound) : "";
    verdict(label, a !== undefined && x !== undefined ? x <= bound * a : undefined, a !== undefined && x !== undefined ? `+${f2(x)} ms against chat completions' +${f2(a)} ms: ${f2(x / a)}×${spread}` : why([ours, `${id}:${m.head}`], lo, s));
  };
  for (const [id, binding] of [["gw-a2a", "JSON-RPC"], ["gw-a2a-rest", "HTTP+JSON"]] as const) {
    for (const s of [false, true]) versus(id, s, 1.1, `A2A over ${binding} (SendMessage${s ? "/SendStreamingMessage" : ""}) adds ≤ 10 % to the chat path's added mean at ${lo} connection(s) (${mode(s)})`);
  }
  versus("gw-mcp", false, 1.1, `MCP (tools/call chat) adds ≤ 10 % to the chat path's added mean at ${lo} connection(s)`);
  versus("gw-mcp26", false, 1.1, `MCP 2026-07-28 (tools/call chat, SDK v2) adds ≤ 10 % to the chat path's added mean at ${lo} connection(s)`);
  versus("gw-b-limited", false, 1.05, `a key with an expiry and a spend limit costs no more than one without (added mean at ${lo} connection(s), within 5 % noise)`);
  versus("gw-fallback", false, 2, `a fallback answer with the failing model's breaker open costs no retry budget (added mean ≤ 2× the chat path's at ${lo} connection(s))`);

  return [
    "### Targets (issue 21)",
    "",
    "Provider_b path. \"ours\" is `npm run serve` with billing and a stored thread; a continuation row's reference is the new-thread row of the same",
    "accounts (one account, or the spread row's); Portkey's continuation resends the whole history every turn (it stores nothing). A cell with",
    "any error is not measured.",
    "",
    "| row | ours | reference | goal | verdict |",
    "|---|---|---|---|---|",
    ...rows21,
    "",
    "### Targets (issues 13, 18, 20)",
    "",
    "| target | verdict | measured |",
    "|---|---|---|",
    ...lines,
  ].join("\n");
}
