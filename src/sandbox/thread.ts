/**
 * Sandbox worker thread: runs one script at a time in QuickJS (WebAssembly).
 *
 * Self-contained on purpose (no relative imports, erasable types only): it is loaded as a
 * worker_threads entry from source (Node type stripping / swc loader) and from dist alike.
 * Every run gets a fresh WASM instance with its own fixed `WebAssembly.Memory`, because
 * `setMemoryLimit` does not bound the heap in the prebuilt builds (STACK.md). Host calls
 * (ctx.chat, ctx.fetch, ctx.step, ctx.ask) are posted to the parent thread. CPU time is this thread's own
 * CPU time (`process.threadCpuUsage`), checked by QuickJS's interrupt handler; the wall-time
 * deadline is enforced here and, should this thread stop answering, by the parent terminating it.
 */
import { parentPort } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle } from "quickjs-emscripten-core";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";

type RunRequest = {
  type: "run";
  id: number;
  source: string;
  input: string;
  /** JSON object of name → value (ctx.secrets). */
  secrets: string;
  cpuTimeMs: number;
  wallTimeMs: number;
  memoryMb: number;
  maxHostCalls: number;
  maxLogLines: number;
  maxLogLineBytes: number;
  maxLogBytes: number;
  maxResultBytes: number;
};
type ValidateRequest = { type: "validate"; id: number; source: string };
type HostReply = { type: "host-reply"; id: number; callId: number; ok: boolean; value?: string; error?: string };
type Incoming = RunRequest | ValidateRequest | HostReply;

// lib ES2023 has no WebAssembly typings; Node provides the global.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (d: { initial: number; maximum: number }) => object;
};
// The package's types describe its CommonJS build; the ESM default export is the variant itself.
const baseVariant = releaseVariant as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0];

const port = parentPort!;
const require = createRequire(import.meta.url);
// Compiled once per thread; instantiating it per run is cheap (~1 ms).
const wasmModule = new WebAssembly.Module(readFileSync(require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm")));
const PAGE = 65536;

const pendingHostCalls = new Map<number, (reply: HostReply) => void>();
let nextCallId = 1;

async function newRuntime(memoryMb: number) {
  // The module's own initial heap is 16 MB; the cap is the maximum the memory may grow to.
  const maximum = Math.max(256, Math.floor((memoryMb * 1024 * 1024) / PAGE));
  const wasmMemory = new WebAssembly.Memory({ initial: Math.min(256, maximum), maximum });
  const qjs = await newQuickJSWASMModuleFromVariant(newVariant(baseVariant as never, { wasmModule, wasmMemory } as never));
  const runtime = qjs.newRuntime();
  runtime.setMaxStackSize(512 * 1024);
  return runtime;
}

/** `export default` → a global binding, so the script evaluates as a plain module. */
function moduleWrapper(): string {
  return `import run from "user-script"; globalThis.__run = run;`;
}

const NO_DEFAULT = "The script must `export default async function run(input, ctx)`";

function errorText(ctx: QuickJSContext, handle: QuickJSHandle): string {
  const value = ctx.dump(handle) as unknown;
  if (/Could not find export 'default'/.test(String((value as { message?: string })?.message ?? value))) return NO_DEFAULT;
  if (value && typeof value === "object") {
    const e = value as { name?: string; message?: string; stack?: string };
    const where = /user-script:(\d+)(?::(\d+))?/.exec(e.stack ?? "");
    const at = where ? ` (line ${where[1]}${where[2] ? `, column ${where[2]}` : ""})` : "";
    return `${e.name ?? "Error"}: ${e.message ?? String(value)}${at}`;
  }
  return `the script threw a non-Error value (${value === null ? "null" : typeof value}): ${String(value).slice(0, 200)}`;
}

/** Maps a QuickJS failure to what the run reports: deadline and heap cap get their own kinds. */
function classify(msg: string, req: RunRequest): { kind: "script" | "timeout" | "memory"; error: string } {
  if (/\binterrupted\b/i.test(msg)) return { kind: "timeout", error: `Script exceeded its CPU time limit of ${req.cpuTimeMs} ms` };
  if (/out of memory|memory access out of bounds|Cannot enlarge memory|RuntimeError: (unreachable|abort)/i.test(msg))
    return { kind: "memory", error: `Script exceeded its memory limit of ${req.memoryMb} MB` };
  return { kind: "script", error: msg };
}

function safeDispose(...items: ({ dispose(): void; alive?: boolean } | undefined)[]): void {
  for (const item of items) {
    try {
      if (item && item.alive !== false) item.dispose();
    } catch {
      /* a VM that failed mid-run may not dispose cleanly; dropping it lets GC take the instance */
    }
  }
}

/**
 * Compiles and evaluates the module (top-level code only, under a short deadline) and checks
 * that it has a default-exported function. `run` itself is not called.
 */
async function validate(req: ValidateRequest): Promise<void> {
  const runtime = await newRuntime(32);
  const deadline = Date.now() + 1000;
  runtime.setInterruptHandler(() => Date.now() > deadline);
  runtime.setModuleLoader((name) => (name === "user-script" ? req.source : { error: new Error(`Imports are not available in scripts (tried "${name}")`) }));
  const ctx = runtime.newContext();
  const fail = (error: string) => port.postMessage({ type: "result", id: req.id, ok: false, error });
  try {
    const mod = ctx.evalCode(moduleWrapper(), "main", { type: "module" });
    if (mod.error) return fail(errorText(ctx, mod.error));
    const state = ctx.getPromiseState(mod.value);
    if (state.type === "rejected") return fail(errorText(ctx, state.error));
    const fn = ctx.getProp(ctx.global, "__run");
    const kind = ctx.typeof(fn);
    fn.dispose();
    if (kind !== "function") return fail("The script must `export default async function run(input, ctx)`");
    port.postMessage({ type: "result", id: req.id, ok: true });
  } finally {
    // Not disposed: after a failed module evaluation QuickJS asserts on free. The instance is
    // unreferenced after this and collected with its memory.
  }
}

const utf8 = new TextEncoder();

/**
 * A log line within SCRIPT_MAX_LOG_LINE_BYTES and what is left of SCRIPT_MAX_LOG_BYTES, cut on a
 * character boundary (encodeInto stops at the first character that does not fit, and reads no further
 * than the room it is given); `cut` is the marker the host appends after redacting the line.
 */
function boundedLogLine(text: string, req: RunRequest, budget: { used: number; spent: boolean }): { line: string; cut?: string } {
  const room = Math.min(req.maxLogLineBytes, req.maxLogBytes - budget.used);
  // Three bytes a UTF-16 unit at most: a line this short fits without encoding it.
  if (text.length * 3 <= room) {
    budget.used += Buffer.byteLength(text, "utf8");
    return { line: text };
  }
  const { read, written } = utf8.encodeInto(text, new Uint8Array(room));
  budget.used += written;
  if (read === text.length) return { line: text };
  if (room < req.maxLogLineBytes) {
    budget.spent = true;
    return { line: text.slice(0, read), cut: `… [ctx.log output cut: a run keeps at most ${req.maxLogBytes} bytes of log (SCRIPT_MAX_LOG_BYTES)]` };
  }
  return { line: text.slice(0, read), cut: `… [line cut at ${req.maxLogLineBytes} bytes (SCRIPT_MAX_LOG_LINE_BYTES)]` };
}

/**
 * The `ctx` object, built inside the VM from two host functions: `host(method, json)` returns a
 * promise of a JSON string, `log(...)`. `ctx.step` is plain JavaScript around two journal calls,
 * and both paths (executed, replayed) return the JSON round trip of the value.
 */
const CTX_SOURCE = `(host, log, secrets) => {
  const call = async (method, args) => JSON.parse(await host(method, JSON.stringify(args === undefined ? null : args)));
  return Object.freeze({
    log,
    secrets: Object.freeze(secrets),
    chat: (args) => call("chat", args),
    fetch: (url, init) => {
      const o = init == null ? {} : init;
      const body = o.body == null || typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      return call("fetch", { url: String(url), method: o.method, headers: o.headers, body });
    },
    ask: async (args) => {
      const r = await call("ask", args);
      if (r && r.answered) return r.value;
      const e = new Error("ctx.ask: nobody answered before the request timed out");
      e.code = "input_timeout";
      throw e;
    },
    step: async (name, fn) => {
      if (typeof name !== "string" || typeof fn !== "function") throw new TypeError("ctx.step(name, fn) needs a name and a function");
      const begun = await call("step:begin", { name });
      if (begun.done) return begun.value;
      const value = await fn();
      return call("step:end", { key: begun.key, value: value === undefined ? null : value });
    },
  });
}`;

async function run(req: RunRequest): Promise<void> {
  const deadline = Date.now() + req.wallTimeMs;
  let runtime: Awaited<ReturnType<typeof newRuntime>> | undefined;
  let ctx: QuickJSContext | undefined;
  let hostCalls = 0;
  let logLines = 0;
  let succeeded = false;
  const reply = (msg: Record<string, unknown>) => {
    port.postMessage({ type: "result", id: req.id, ...msg });
  };
  const wallError = `Script exceeded its wall time limit of ${req.wallTimeMs} ms`;
  try {
    runtime = await newRuntime(req.memoryMb);
    const rt = runtime;
    // CPU time as CPU time: this thread's own usage, so awaiting a host call costs nothing.
    const cpuStart = process.threadCpuUsage();
    let wallExceeded = false;
    rt.setInterruptHandler(() => {
      if (Date.now() > deadline) return (wallExceeded = true);
      const used = process.threadCpuUsage(cpuStart);
      return (used.user + used.system) / 1000 > req.cpuTimeMs;
    });
    rt.setModuleLoader((name) => {
      if (name === "user-script") return req.source;
      return { error: new Error(`Imports are not available in scripts (tried "${name}")`) };
    });
    const vm = rt.newContext();
    ctx = vm;
    const fail = (text: string) => {
      const c = classify(text, req);
      reply({ ok: false, ...(c.kind === "timeout" && wallExceeded ? { kind: "timeout", error: wallError } : c) });
    };

    // ctx.log: synchronous, fire-and-forget to the parent, which keeps the first maxLogLines. The
    // byte limits apply here, so a huge line never crosses to the worker's main thread.
    const logBytes = { used: 0, spent: false };
    const logFn = vm.newFunction("log", (...args) => {
      if (logBytes.spent || ++logLines > req.maxLogLines + 1) return;
      const parts = args.map((h) => {
        if (vm.typeof(h) === "string") return vm.getString(h);
        const v = vm.dump(h) as unknown;
        return typeof v === "string" ? v : JSON.stringify(v);
      });
      const { line, cut } = boundedLogLine(parts.join(" "), req, logBytes);
      port.postMessage({ type: "log", id: req.id, line, ...(cut ? { cut } : {}) });
    });
    // The one host function: a QuickJS promise resolved when the parent answers.
    const hostFn = vm.newFunction("host", (methodHandle, argHandle) => {
      const deferred = vm.newPromise();
      const method = vm.getString(methodHandle);
      if (method !== "step:end" && ++hostCalls > req.maxHostCalls) {
        const err = vm.newError(`Host call limit reached (${req.maxHostCalls} ctx.chat/ctx.fetch/ctx.step calls per run)`);
        deferred.reject(err);
        err.dispose();
        return deferred.handle;
      }
      const callId = nextCallId++;
      const json = vm.getString(argHandle);
      pendingHostCalls.set(callId, (r) => {
        if (!vm.alive) return;
        if (r.ok) {
          const str = vm.newString(r.value ?? "null");
          deferred.resolve(str);
          str.dispose();
        } else {
          const err = vm.newError(r.error ?? "host call failed");
          deferred.reject(err);
          err.dispose();
        }
        // Resolve first, then let the VM run the continuations (STACK.md).
        rt.executePendingJobs();
      });
      port.postMessage({ type: "host-call", id: req.id, callId, method, args: json });
      return deferred.handle;
    });
    const secretsHandle = vm.unwrapResult(vm.evalCode(`(${req.secrets})`));
    const ctxObj = vm.unwrapResult(vm.evalCode(CTX_SOURCE)).consume((make) => vm.unwrapResult(vm.callFunction(make, vm.undefined, hostFn, logFn, secretsHandle)));
    logFn.dispose();
    hostFn.dispose();
    secretsHandle.dispose();

    const mod = vm.evalCode(moduleWrapper(), "main", { type: "module" });
    if (mod.error) {
      fail(errorText(vm, mod.error));
      mod.error.dispose();
      return;
    }
    // Module evaluation may return a promise (top-level await); settle it.
    const modState = vm.getPromiseState(mod.value);
    mod.value.dispose();
    rt.executePendingJobs();
    if (modState.type === "rejected") {
      fail(errorText(vm, modState.error));
      modState.error.dispose();
      return;
    }
    const runFn = vm.getProp(vm.global, "__run");
    if (vm.typeof(runFn) !== "function") {
      runFn.dispose();
      reply({ ok: false, kind: "script", error: NO_DEFAULT });
      return;
    }
    const inputHandle = vm.unwrapResult(vm.evalCode("JSON.parse")).consume((parse) => {
      const text = vm.newString(req.input);
      const parsed = vm.callFunction(parse, vm.undefined, text);
      text.dispose();
      return vm.unwrapResult(parsed);
    });
    const call = vm.callFunction(runFn, vm.undefined, inputHandle, ctxObj);
    runFn.dispose();
    inputHandle.dispose();
    ctxObj.dispose();
    if (call.error) {
      fail(errorText(vm, call.error));
      call.error.dispose();
      return;
    }
    const settled = vm.resolvePromise(call.value);
    call.value.dispose();
    rt.executePendingJobs();
    const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), Math.max(0, deadline - Date.now())).unref());
    const outcome = await Promise.race([settled, timer]);
    if (outcome === "timeout") {
      reply({ ok: false, kind: "timeout", error: wallError });
      return;
    }
    if (outcome.error) {
      const msg = errorText(vm, outcome.error);
      outcome.error.dispose();
      fail(msg);
      return;
    }
    const json = vm.unwrapResult(vm.evalCode("(v) => JSON.stringify(v === undefined ? null : v)")).consume((f) => vm.callFunction(f, vm.undefined, outcome.value));
    outcome.value.dispose();
    if (json.error) {
      reply({ ok: false, kind: "script", error: `The result is not JSON: ${errorText(vm, json.error)}` });
      json.error.dispose();
      return;
    }
    const text = vm.getString(json.value);
    json.value.dispose();
    // Size here (before the copy to the parent); nesting depth is checked by the pool.
    if (text.length > req.maxResultBytes) {
      reply({ ok: false, kind: "script", error: `The result is larger than the limit of ${req.maxResultBytes} bytes` });
      return;
    }
    reply({ ok: true, result: text });
    succeeded = true;
  } catch (err) {
    const msg = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    reply({ ok: false, ...classify(msg, req) });
  } finally {
    pendingHostCalls.clear();
    // Only a clean run is disposed: after an error, out-of-memory or interrupt QuickJS may assert
    // on free. A dropped instance is unreferenced and collected with its own WebAssembly.Memory.
    if (succeeded) safeDispose(ctx, runtime);
  }
}

port.on("message", (msg: Incoming) => {
  if (msg.type === "host-reply") {
    pendingHostCalls.get(msg.callId)?.(msg);
    pendingHostCalls.delete(msg.callId);
  } else if (msg.type === "validate") {
    validate(msg).catch((err) => port.postMessage({ type: "result", id: msg.id, ok: false, error: String(err) }));
  } else if (msg.type === "run") {
    run(msg).catch((err) => port.postMessage({ type: "result", id: msg.id, ok: false, kind: "script", error: String(err) }));
  }
});
