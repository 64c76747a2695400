import { waitForJob } from "../jobs/wait.js";
import type { Runtime } from "../runtime/runtime.js";
import { isTerminal, type CallState } from "./call.js";
import { A2A_TASK_CHANNEL, followTask } from "./chat-task-store.js";
import { findTask, INPUT_REQUIRED, type TaskRow } from "./store.js";

const CHAT_POLL_MS = 5_000;

/** Waits for a task's end (or the deadline / the signal), telling `onState` each state seen. */
export async function followToEnd(runtime: Runtime, s: CallState, row: TaskRow, until: Date, signal: AbortSignal, onState?: (row: TaskRow) => void | Promise<void>): Promise<void> {
  const { accountId, id: agentId } = s.principal.agent;
  if (row.kind === "job") {
    let last = row.state;
    // A question the job comes to interrupts the task: the wait ends there, as at its end.
    const interrupted = new AbortController();
    const stop = () => interrupted.abort();
    signal.addEventListener("abort", stop, { once: true });
    try {
      await waitForJob(runtime, accountId, row.id, {
        until,
        signal: interrupted.signal,
        onStatus: async () => {
          const now = await findTask(runtime.pool, accountId, agentId, row.id);
          if (now && now.state !== last) {
            last = now.state;
            await onState?.(now);
            if (now.state === INPUT_REQUIRED) interrupted.abort();
          }
        },
      });
    } finally {
      signal.removeEventListener("abort", stop);
    }
    return;
  }
  // A chat task: its end is NOTIFYed; a slow poll also catches an interrupted turn.
  let wake!: () => void;
  let woken = new Promise<void>((r) => (wake = r));
  const off = await runtime.events.subscribe(A2A_TASK_CHANNEL, (payload) => {
    if (payload.includes(`"${row.id}"`)) wake();
  });
  const timer = setInterval(() => wake(), CHAT_POLL_MS);
  const stop = () => wake();
  signal.addEventListener("abort", stop, { once: true });
  try {
    // Only a followed task's end is NOTIFYed; marked after the LISTEN, before the first read.
    await followTask(runtime.pool, row.id);
    while (!signal.aborted && Date.now() < until.getTime()) {
      const now = await findTask(runtime.pool, accountId, agentId, row.id);
      if (!now) return;
      if (now.state !== row.state || isTerminal(now)) {
        await onState?.(now);
        if (isTerminal(now)) return;
      }
      await woken;
      woken = new Promise<void>((r) => (wake = r));
    }
  } finally {
    off();
    clearInterval(timer);
    signal.removeEventListener("abort", stop);
  }
}
