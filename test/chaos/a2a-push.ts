import { StreamResponse, TaskState } from "@a2a-js/sdk";
import type { Callback } from "../helpers/callback-receiver.js";

/**
 * The chaos suite's view of A2A push notifications: the POSTs the local receiver got for the push
 * configs of the A2A tasks that rode out the faults. Each config has its own receiver path, so a
 * request belongs to the config whose URL it was sent to. A delivery is retried with the same
 * `webhook-id` (`msg_<config id>_<state>`, src/outbound/store.ts), so "one terminal event per
 * (task, config)" is one distinct id among that config's terminal POSTs, whatever the retries.
 */

/** A push config as the suite made it and as ListTaskPushNotificationConfigs lists it after the run. */
export interface PushConfigUnderTest {
  taskId: string;
  configId: string;
  /** The receiver path of the config's URL. */
  path: string;
  token: string;
  /** Given in SendMessage's configuration, or created by CreateTaskPushNotificationConfig after a non-blocking send. */
  how: "send" | "created";
}

const TERMINAL = new Set<TaskState>([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED]);

export interface ReceivedPush {
  path: string;
  webhookId: string;
  token: string | null;
  status?: number;
  /** Null when the body is no A2A StreamResponse. */
  taskId: string | null;
  state: TaskState | null;
  /** A `task` event in a final state (the engine sends the whole task for COMPLETED, FAILED, CANCELED). */
  terminal: boolean;
}

export function readPush(c: Callback): ReceivedPush {
  const base = { path: c.path, webhookId: String(c.headers["webhook-id"] ?? ""), token: (c.headers["x-a2a-notification-token"] as string | undefined) ?? null, status: c.status };
  try {
    const p = StreamResponse.fromJSON(JSON.parse(c.body)).payload;
    if (p?.$case === "task") return { ...base, taskId: p.value.id, state: p.value.status?.state ?? null, terminal: TERMINAL.has(p.value.status?.state as TaskState) };
    if (p?.$case === "statusUpdate") return { ...base, taskId: p.value.taskId, state: p.value.status?.state ?? null, terminal: false };
  } catch {
    /* not an A2A event: a stray */
  }
  return { ...base, taskId: null, state: null, terminal: false };
}

const acknowledged = (r: ReceivedPush) => r.status !== undefined && r.status >= 200 && r.status < 300;

/** The receiver paths (configs) that already acknowledged a terminal event: how far the run is when a fault strikes. */
export const terminalAcknowledged = (received: ReceivedPush[]) => new Set(received.filter((r) => r.terminal && acknowledged(r)).map((r) => r.path));

export interface A2aPushFigures {
  tasks: number;
  /** Configs listed for the tasks after the run, by how they were made. */
  configs: number;
  configsInSend: number;
  configsCreated: number;
  /** Configs whose receiver acknowledged (2xx) a COMPLETED task event of its task with its token. */
  delivered: number;
  lost: number;
  /** Configs whose terminal POSTs carried exactly one webhook-id, `msg_<config id>_completed`. */
  exactlyOnce: number;
  /** Configs that got terminal POSTs under more than one webhook-id (a second terminal event). */
  severalTerminalEvents: number;
  /** Terminal POSTs reporting another final state than COMPLETED. */
  wrongTerminalState: number;
  /** 2xx-acknowledged terminal POSTs beyond the first per config (at-least-once redeliveries, same webhook-id). */
  duplicateDeliveries: number;
  /** Configs that also got their WORKING status (not required: a config created after the task started may miss it). */
  workingSeen: number;
  attempts: number;
  receiverErrors: number;
  /** POSTs without the config's token, or naming another task than the config's. */
  wrongToken: number;
  wrongTask: number;
  /** POSTs to no config's path, or whose body is no A2A event. */
  strays: number;
}

export function pushFigures(configs: PushConfigUnderTest[], received: ReceivedPush[]): A2aPushFigures & { lostConfigs: string[] } {
  const byPath = new Map(configs.map((c) => [c.path, c]));
  const perConfig = new Map<string, ReceivedPush[]>(configs.map((c) => [c.configId, []]));
  let strays = 0;
  for (const r of received) {
    const c = byPath.get(r.path);
    if (!c || r.taskId === null) strays++;
    else perConfig.get(c.configId)!.push(r);
  }
  const ok = (c: PushConfigUnderTest, r: ReceivedPush) => r.taskId === c.taskId && r.token === c.token;
  const lostConfigs = configs.filter((c) => !perConfig.get(c.configId)!.some((r) => r.terminal && r.state === TaskState.TASK_STATE_COMPLETED && ok(c, r) && acknowledged(r))).map((c) => c.configId);
  const terminalIds = (c: PushConfigUnderTest) => new Set(perConfig.get(c.configId)!.filter((r) => r.terminal).map((r) => r.webhookId));
  const all = configs.flatMap((c) => perConfig.get(c.configId)!.map((r) => ({ c, r })));
  return {
    tasks: new Set(configs.map((c) => c.taskId)).size,
    configs: configs.length,
    configsInSend: configs.filter((c) => c.how === "send").length,
    configsCreated: configs.filter((c) => c.how === "created").length,
    delivered: configs.length - lostConfigs.length,
    lost: lostConfigs.length,
    lostConfigs,
    exactlyOnce: configs.filter((c) => {
      const ids = terminalIds(c);
      return ids.size === 1 && ids.has(`msg_${c.configId}_completed`);
    }).length,
    severalTerminalEvents: configs.filter((c) => terminalIds(c).size > 1).length,
    wrongTerminalState: all.filter(({ r }) => r.terminal && r.state !== TaskState.TASK_STATE_COMPLETED).length,
    duplicateDeliveries: configs.reduce((n, c) => n + Math.max(0, perConfig.get(c.configId)!.filter((r) => r.terminal && acknowledged(r)).length - 1), 0),
    workingSeen: configs.filter((c) => perConfig.get(c.configId)!.some((r) => r.state === TaskState.TASK_STATE_WORKING)).length,
    attempts: received.length,
    receiverErrors: received.filter((r) => r.status === 500).length,
    wrongToken: all.filter(({ c, r }) => r.token !== c.token).length,
    wrongTask: all.filter(({ c, r }) => r.taskId !== c.taskId).length,
    strays,
  };
}
