import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { appendToHistory, replaceSection, sectionHeading } from "./sections.js";

/** Shared plumbing of the bench scripts: child processes, readiness, machine facts, BENCHMARKS.md. */

export const say = (m: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const verbose = Boolean(process.env.BENCH_VERBOSE);

export interface Proc {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<number | string | null>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const procs = new Set<Proc>();

/**
 * Starts a child process the bench owns. `group`: the child leads its own process group and the
 * whole group is signalled on stop (for launchers such as `npm start` that start their own
 * children). Output is dropped unless BENCH_VERBOSE is set.
 */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; group?: boolean; onStdout?: (chunk: string) => void } = {},
): Proc {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (v !== undefined) env[k] = v;
  const child = spawn(command, args, {
    env,
    cwd: options.cwd,
    detached: options.group ?? false,
    stdio: ["ignore", options.onStdout || verbose ? "pipe" : "ignore", verbose ? "pipe" : "ignore"],
  });
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    options.onStdout?.(d);
    if (verbose) process.stderr.write(`[${name}] ${d}`);
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => process.stderr.write(`[${name}] ${d}`));
  const exited = new Promise<number | string | null>((res) => child.once("exit", (code, sig) => res(code ?? sig)));
  const proc: Proc = {
    name,
    child,
    exited,
    async stop(signal = "SIGTERM") {
      procs.delete(proc);
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        if (options.group) process.kill(-child.pid!, signal);
        else child.kill(signal);
      } catch {
        /* already gone */
      }
      const timeout = sleep(15_000).then(() => "timeout");
      if ((await Promise.race([exited, timeout])) === "timeout") {
        try {
          if (options.group) process.kill(-child.pid!, "SIGKILL");
          else child.kill("SIGKILL");
        } catch {
          /* already gone */
        }
      }
    },
  };
  procs.add(proc);
  return proc;
}

/** Stops every process the bench started, newest first. */
export async function stopAll(): Promise<void> {
  for (const p of [...procs].reverse()) await p.stop();
}

export async function waitForHttp(url: string, options: { timeoutMs?: number; proc?: Proc } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let died = false;
  void options.proc?.exited.then(() => (died = true));
  while (Date.now() < deadline) {
    if (died) throw new Error(`${options.proc!.name} exited before ${url} came up (BENCH_VERBOSE=1 shows its output)`);
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/** Reads the first line a child prints on stdout (the mock prints its port). */
export function firstLine(start: (onStdout: (d: string) => void) => Proc): Promise<{ proc: Proc; line: string }> {
  return new Promise((resolve, reject) => {
    let buf = "";
    let done = false;
    const proc = start((d) => {
      buf += d;
      const i = buf.indexOf("\n");
      if (i >= 0 && !done) {
        done = true;
        resolve({ proc, line: buf.slice(0, i).trim() });
      }
    });
    void proc.exited.then((code) => !done && reject(new Error(`${proc.name} exited (${code}) before printing`)));
  });
}

/** Resident set size of a process in MB (VmRSS from /proc/<pid>/status). */
export function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

export const loadNow = () => loadavg().map((x) => x.toFixed(2));

/** Percentile (nearest rank) of a sample. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/**
 * The provenance line every table carries: command, date, machine, Node version and the load
 * average when the run started (and ended, so a reader sees whether the machine was shared).
 */
export function provenance(command: string, loadAtStart: string[]): string {
  const cpu = cpus()[0]?.model?.trim() ?? "unknown CPU";
  return (
    `Command: \`${command}\`. Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpus().length} CPUs (${cpu}), ` +
    `Node ${process.version}; load average (1/5/15 min) ${loadAtStart.join(" / ")} at the start, ${loadNow().join(" / ")} at the end.`
  );
}

/** The command line that reproduces this run: the BENCH_* variables set, then the npm script. */
const INTERNAL = new Set(["BENCH_VERBOSE", "BENCH_WRITE", "BENCH_COMMAND", "BENCH_GATEWAYS", "BENCH_GATEWAY_ROOT", "BENCH_SECTION", "BENCH_COMPARISON", "BENCH_SKIP_BUILD"]);
export function commandLine(script: string): string {
  const vars = Object.entries(process.env)
    .filter(([k]) => k.startsWith("BENCH_") && !INTERNAL.has(k))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  // bench/compare.sh names itself (its worktree paths mean nothing to a reader).
  return [...vars, process.env.BENCH_COMMAND ?? `npm run ${script}`].join(" ");
}

export const BENCHMARKS_FILE = "BENCHMARKS.md";
export const HISTORY_DIR = "bench/history";
/** The top of a BENCHMARKS.md that has none (the file's own guide is kept as it is). */
const PREAMBLE = `# Benchmarks

Each section below is the latest run of one benchmark, written by its script; earlier runs and
two-build comparisons are in bench/history/.`;

/** A benchmark's section title in BENCHMARKS.md and its history file (bench/history/<history>.md). */
export interface Bench {
  title: string;
  history: string;
}
export const BENCHES = {
  chat: { title: "Chat", history: "chat" },
  webhooks: { title: "Webhooks", history: "webhooks" },
  webhooksBreakdown: { title: "Webhook → done, step by step", history: "webhooks-breakdown" },
  upstream: { title: "Upstream client", history: "upstream-client" },
  scale: { title: "Scale: every operation as the tables grow", history: "scale" },
  memory: { title: "Memory", history: "memory" },
} satisfies Record<string, Bench>;

const readIfAny = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : undefined);

/**
 * Writes a run of `bench` (bench/lib/sections.ts): its section "## <title>" (or "## <title>
 * (<BENCH_SECTION>)", a labelled variant) replaces the previous run's in BENCHMARKS.md, which moves
 * to the benchmark's history file. A comparison of two builds (BENCH_COMPARISON, set by
 * bench/compare.sh) goes to the history file only. BENCH_WRITE=0 only prints the section.
 */
export function writeSection(bench: Bench, body: string): void {
  const comparison = process.env.BENCH_COMPARISON;
  const section = `${sectionHeading(bench.title, comparison || process.env.BENCH_SECTION)}\n\n${body.trim()}\n`;
  process.stdout.write(`\n${section}\n`);
  if (process.env.BENCH_WRITE === "0") return;
  const historyFile = join(HISTORY_DIR, `${bench.history}.md`);
  const keep = (old: string) => {
    mkdirSync(HISTORY_DIR, { recursive: true });
    writeFileSync(historyFile, appendToHistory(readIfAny(historyFile), bench.title, old));
  };
  if (comparison) return keep(section);
  const { doc, replaced } = replaceSection(readIfAny(BENCHMARKS_FILE) ?? "", PREAMBLE, section);
  if (replaced) keep(replaced);
  writeFileSync(BENCHMARKS_FILE, doc);
}

/** Runs `f`, always stopping the bench's processes afterwards (also on Ctrl-C). */
export async function main(f: () => Promise<void>): Promise<void> {
  const onSignal = () => {
    say("interrupted; stopping everything");
    void stopAll().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await f();
  } catch (err) {
    process.stderr.write(`${(err as Error | undefined)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await stopAll();
  }
}
