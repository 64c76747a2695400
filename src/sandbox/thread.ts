/**
 * Sandbox worker thread: runs one script at a time in QuickJS (WebAssembly).
 *
 * Self-contained on purpose (no relative imports, erasable types only): it is loaded as a
 * worker_threads entry from source (Node type stripping / swc loader) and from dist alike.
 * Every run gets a fresh WASM instance with its own fixed `WebAssembly.Memory`, because
 * `setMemoryLimit` does not bound the heap in the prebuilt builds (STACK.md). Host calls
 * (ctx.chat) are posted to the parent thread; the parent enforces the wall-clock deadline by
 * terminating this thread if a run overstays.
 */
import { parentPort } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle } from "quickjs-emscripten-core";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";

type RunRequest = { type: "run"; id: number; source: string; input: string; timeoutMs: number; memoryMb: number; maxHostCalls: number };
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
    const where = /user-script:(\d+)/.exec(e.stack ?? "");
    return `${e.name ?? "Error"}: ${e.message ?? String(value)}${where ? ` (line ${where[1]})` : ""}`;
  }
  return String(value);
}

/** Maps a QuickJS failure to what the run reports: deadline and heap cap get their own kinds. */
function classify(msg: string, req: RunRequest): { kind: "script" | "timeout" | "memory"; error: string } {
  if (/\binterrupted\b/i.test(msg)) return { kind: "timeout", error: `Script exceeded its time limit of ${req.timeoutMs} ms` };
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

async function run(req: RunRequest): Promise<void> {
  const deadline = Date.now() + req.timeoutMs;
  let runtime: Awaited<ReturnType<typeof newRuntime>> | undefined;
  let ctx: QuickJSContext | undefined;
  let hostCalls = 0;
  let succeeded = false;
  const reply = (msg: Record<string, unknown>) => {
    port.postMessage({ type: "result", id: req.id, ...msg });
  };
  try {
    runtime = await newRuntime(req.memoryMb);
    const rt = runtime;
    rt.setInterruptHandler(() => Date.now() > deadline);
    rt.setModuleLoader((name) => {
      if (name === "user-script") return req.source;
      return { error: new Error(`Imports are not available in scripts (tried "${name}")`) };
    });
    const vm = rt.newContext();
    ctx = vm;

    // ctx.log: synchronous, fire-and-forget to the parent (which caps the log size).
    const logFn = vm.newFunction("log", (...args) => {
      const parts = args.map((h) => {
        const v = vm.dump(h) as unknown;
        return typeof v === "string" ? v : JSON.stringify(v);
      });
      port.postMessage({ type: "log", id: req.id, line: parts.join(" ") });
    });
    // ctx.chat: a QuickJS promise resolved when the parent answers.
    const chatFn = vm.newFunction("chat", (argHandle) => {
      const deferred = vm.newPromise();
      hostCalls++;
      if (hostCalls > req.maxHostCalls) {
        const err = vm.newError(`Host call limit reached (${req.maxHostCalls} per run)`);
        deferred.reject(err);
        err.dispose();
        return deferred.handle;
      }
      const callId = nextCallId++;
      const json = JSON.stringify(vm.dump(argHandle) ?? null);
      pendingHostCalls.set(callId, (r) => {
        if (!vm.alive) return;
        if (r.ok) {
          const parsed = vm.unwrapResult(vm.evalCode(`(${r.value ?? "null"})`));
          deferred.resolve(parsed);
          parsed.dispose();
        } else {
          const err = vm.newError(r.error ?? "host call failed");
          deferred.reject(err);
          err.dispose();
        }
        // Resolve first, then let the VM run the continuations (STACK.md).
        rt.executePendingJobs();
      });
      port.postMessage({ type: "host-call", id: req.id, callId, method: "chat", args: json });
      return deferred.handle;
    });
    const ctxObj = vm.newObject();
    vm.setProp(ctxObj, "log", logFn);
    vm.setProp(ctxObj, "chat", chatFn);
    logFn.dispose();
    chatFn.dispose();

    const mod = vm.evalCode(moduleWrapper(), "main", { type: "module" });
    if (mod.error) {
      reply({ ok: false, ...classify(errorText(vm, mod.error), req) });
      mod.error.dispose();
      return;
    }
    // Module evaluation may return a promise (top-level await); settle it.
    const modState = vm.getPromiseState(mod.value);
    mod.value.dispose();
    rt.executePendingJobs();
    if (modState.type === "rejected") {
      reply({ ok: false, ...classify(errorText(vm, modState.error), req) });
      modState.error.dispose();
      return;
    }
    const runFn = vm.getProp(vm.global, "__run");
    if (vm.typeof(runFn) !== "function") {
      runFn.dispose();
      reply({ ok: false, kind: "script", error: "The script must `export default async function run(input, ctx)`" });
      return;
    }
    const inputHandle = vm.unwrapResult(vm.evalCode(`(${req.input})`));
    const call = vm.callFunction(runFn, vm.undefined, inputHandle, ctxObj);
    runFn.dispose();
    inputHandle.dispose();
    ctxObj.dispose();
    if (call.error) {
      reply({ ok: false, ...classify(errorText(vm, call.error), req) });
      call.error.dispose();
      return;
    }
    const settled = vm.resolvePromise(call.value);
    call.value.dispose();
    rt.executePendingJobs();
    const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), Math.max(0, deadline - Date.now())).unref());
    const outcome = await Promise.race([settled, timer]);
    if (outcome === "timeout") {
      reply({ ok: false, kind: "timeout", error: `Script exceeded its time limit of ${req.timeoutMs} ms` });
      return;
    }
    if (outcome.error) {
      const msg = errorText(vm, outcome.error);
      outcome.error.dispose();
      reply({ ok: false, ...classify(msg, req) });
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
