import { loadAgentSecrets } from "../agents/secrets.js";
import { createEgress } from "../egress/fetch.js";
import type { Runtime } from "../runtime/runtime.js";
import { perRuntime } from "../runtime/per-runtime.js";
import { sandboxPool, ScriptError } from "../sandbox/index.js";
import type { AskHandler } from "./ask.js";
import { Journal } from "./journal.js";
import { runLimits } from "./limits.js";
import { createRedactor, type Redactor } from "./redact.js";
import type { AgentRow } from "./store.js";
import { ScriptHost, type Execution, type RunJob } from "./script-host.js";

export type { Execution, ToolUse } from "./script-host.js";

/** One HTTPS client per runtime (it holds the configured CA bundle). */
const egressOf = perRuntime((runtime) => createEgress(runtime.config.egress));

export function newExecution(): Execution {
  return { result: null, threadId: null, costMicros: 0, logs: [], modelCalls: [], toolsUsed: [] };
}

/**
 * Runs the agent on a payload: its script in the sandbox, or (no script) the payload as one user
 * message in a new thread. `execution` is filled as the run goes, so a failure still reports the
 * logs and calls made before it. Returns the run's redactor, for whatever the caller writes.
 */
export async function executeAgent(
  runtime: Runtime,
  job: RunJob,
  agent: AgentRow,
  payload: unknown,
  execution: Execution,
  signal?: AbortSignal,
  ask?: AskHandler,
): Promise<Redactor> {
  const egress = egressOf(runtime);
  if (!agent.script) {
    // The model call is a journaled step like ctx.chat: a retry after a crash does not pay twice.
    const journal = new Journal(runtime.pool, job.id);
    const redact = createRedactor([]);
    const host = new ScriptHost({ runtime, job, journal, steps: await journal.load(), egress, egressAllow: [], redact, maxLogLines: 0, execution });
    const r = await host.modelCall([{ role: "user", content: JSON.stringify(payload) }]);
    execution.costMicros = await journal.cost();
    execution.result = { role: "assistant", content: r.content };
    return redact;
  }

  const journal = new Journal(runtime.pool, job.id);
  // Two independent reads, on two pool connections at once.
  const [secrets, steps] = await Promise.all([loadAgentSecrets(runtime.pool, runtime.config.secretEncryptionKey, job.agentId), journal.load()]);
  const redact = createRedactor(Object.values(secrets));
  const limits = runLimits(runtime.config, agent);
  const host = new ScriptHost({
    runtime,
    job,
    journal,
    steps,
    egress,
    egressAllow: agent.egressAllow ?? [],
    redact,
    maxLogLines: limits.maxLogLines,
    execution,
    ask,
  });
  try {
    const result = await sandboxPool(runtime.config).run({
      source: agent.script,
      input: payload,
      limits,
      secrets,
      onLog: (line, cut) => host.log(line, cut),
      host: (method, args) => host.call(method, args),
      signal,
    });
    execution.result = redact.json(result);
  } catch (err) {
    if (err instanceof Error) err.message = redact.text(err.message);
    throw err instanceof ScriptError || err instanceof Error ? err : new Error(redact.text(String(err)));
  } finally {
    // Everything paid, by this attempt or an earlier one that a crash cut short.
    execution.costMicros = await journal.cost().catch(() => execution.costMicros);
  }
  return redact;
}
