import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { sleep } from "./harness.js";

/**
 * Memory of a running process, from outside: the kernel's view (/proc/<pid>/status: resident set,
 * its anonymous and file-backed parts, the peak, threads) and, where the process exports
 * prom-client's default metrics, V8's view of its main thread (heap used/total, external).
 * Sandbox threads and the Temporal workflow thread have isolates of their own: they are in the RSS,
 * not in the heap figures.
 */
export interface MemSample {
  rss: number;
  anon: number;
  file: number;
  /** VmHWM: the highest RSS since the process started. */
  peak: number;
  threads: number;
  heapUsed?: number;
  heapTotal?: number;
  external?: number;
  /** V8 heap spaces of the main isolate, MB used (old_space, code_space, large_object_space, …). */
  spaces?: Record<string, number>;
}

const MB = 1024 * 1024;

export function procMem(pid: number): Omit<MemSample, "heapUsed" | "heapTotal" | "external" | "spaces"> {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") + kb("RssShmem"), peak: kb("VmHWM"), threads: kb("Threads") * 1024 };
}

/** prom-client's default metrics at `metricsUrl`, in MB. */
export async function heapOf(metricsUrl: string): Promise<Pick<MemSample, "heapUsed" | "heapTotal" | "external" | "spaces">> {
  const text = await (await fetch(metricsUrl)).text();
  const one = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, "m").exec(text);
    return m ? Number(m[1]) / MB : undefined;
  };
  const spaces: Record<string, number> = {};
  for (const m of text.matchAll(/^nodejs_heap_space_size_used_bytes\{space="(\w+)"\} ([0-9.e+]+)$/gm)) spaces[m[1]!] = Number(m[2]) / MB;
  return { heapUsed: one("nodejs_heap_size_used_bytes"), heapTotal: one("nodejs_heap_size_total_bytes"), external: one("nodejs_external_memory_bytes"), spaces };
}

export async function sample(pid: number, metricsUrl?: string): Promise<MemSample> {
  const heap = metricsUrl ? await heapOf(metricsUrl).catch(() => ({})) : {};
  return { ...procMem(pid), ...heap };
}

/** Samples every `everyMs` until `stop()`: the highest RSS and heap seen, and the last sample. */
export function sampler(pid: number, metricsUrl: string | undefined, everyMs = 500) {
  let running = true;
  let max: MemSample | undefined;
  let maxHeap = 0;
  const loop = (async () => {
    while (running) {
      const s = await sample(pid, metricsUrl).catch(() => undefined);
      if (s) {
        if (!max || s.rss > max.rss) max = s;
        maxHeap = Math.max(maxHeap, s.heapUsed ?? 0);
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop(): Promise<{ max: MemSample; maxHeapUsed: number }> {
      running = false;
      await loop;
      return { max: max ?? (await sample(pid, metricsUrl)), maxHeapUsed: maxHeap };
    },
  };
}

/** The node process among `pid` and its descendants whose command line contains `marker` (npm start runs under sh). */
export function descendantWith(pid: number, marker: string): number | undefined {
  const children = (p: number): number[] => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((t) => readFileSync(`/proc/${p}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      return [];
    }
  };
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    const argv = (() => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
      } catch {
        return [];
      }
    })();
    if (/(^|\/)node$/.test(argv[0] ?? "") && argv.some((a) => a.includes(marker))) return p;
    queue.push(...children(p));
  }
  return undefined;
}

/**
 * What loading the code costs, layer by layer: a fresh `node` in `root` imports each module of
 * `chain` in turn (cumulative: what a later step adds on top of the earlier ones) and reports the
 * RSS and V8 heap after each, after a full GC (--expose-gc) so garbage from loading is not counted.
 */
export function importCosts(root: string, chain: string[]): { module: string; rss: number; heap: number }[] {
  const script = `
    import "reflect-metadata";
    import { pathToFileURL } from "node:url";
    const out = [];
    const mark = (module) => { globalThis.gc(); globalThis.gc(); const m = process.memoryUsage(); out.push({ module, rss: m.rss / ${MB}, heap: m.heapUsed / ${MB} }); };
    mark("node + reflect-metadata");
    for (const m of ${JSON.stringify(chain)}) { await import(m.startsWith("dist/") ? pathToFileURL(m).href : m); mark(m); }
    process.stdout.write(JSON.stringify(out));
    process.exit(0);`;
  const text = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8", env: { ...process.env, NODE_ENV: "production" } });
  return JSON.parse(text) as { module: string; rss: number; heap: number }[];
}
