import type { ProcessRole, TopologyProcess } from "./topology-file.js";

/**
 * Keeps the stack's processes running. A process that exits while the stack is not stopping is
 * reported and started again after `restartDelayMs` (same ports, same data): the chaos tests kill
 * processes with SIGKILL and expect the stack to heal, not to tear itself down. A process that
 * keeps dying (`maxRestarts` within a minute) is given up on and the stack stops.
 */
export interface Started {
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export interface Member {
  name: string;
  role: ProcessRole;
  url?: string;
  start(): Promise<Started>;
}

interface Slot {
  member: Member;
  current: Started | undefined;
  restarts: number[];
}

export interface SupervisorOptions {
  say(message: string): void;
  /** A pid changed (start or restart): rewrite topology.json. */
  onChange(): void;
  /** A process keeps crashing: stop everything. */
  onGiveUp(reason: string): void;
  restartDelayMs?: number;
  maxRestarts?: number;
}

export class Supervisor {
  private readonly slots: Slot[] = [];
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {}

  /** Starts `member` and keeps it running. Rejects if the first start fails. */
  async add(member: Member): Promise<void> {
    const slot: Slot = { member, current: undefined, restarts: [] };
    this.slots.push(slot);
    await this.launch(slot);
  }

  processes(): TopologyProcess[] {
    return this.slots
      .filter((s) => s.current && s.current.pid > 0)
      .map((s) => ({ role: s.member.role, name: s.member.name, pid: s.current!.pid, ...(s.member.url ? { url: s.member.url } : {}) }));
  }

  /** Stops members in the given order of names (groups stop in parallel), then any others in reverse start order. */
  async stopAll(order: string[][]): Promise<void> {
    this.stopping = true;
    const stopSlot = async (slot: Slot) => {
      const running = slot.current;
      if (!running) return;
      await running.stop().catch((err) => this.options.say(`${slot.member.name}: ${(err as Error).message}`));
    };
    const named = new Set(order.flat());
    for (const group of order) await Promise.all(this.slots.filter((s) => group.includes(s.member.name)).map(stopSlot));
    for (const slot of [...this.slots].reverse()) if (!named.has(slot.member.name)) await stopSlot(slot);
  }

  private async launch(slot: Slot): Promise<void> {
    const started = await slot.member.start();
    slot.current = started;
    this.options.onChange();
    void started.exited.then((how) => this.onExit(slot, started, how));
  }

  private onExit(slot: Slot, started: Started, how: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (this.stopping || slot.current !== started) return;
    const { name } = slot.member;
    const cause = how.signal ? `signal ${how.signal}` : `code ${how.code}`;
    const now = Date.now();
    slot.restarts = slot.restarts.filter((t) => now - t < 60_000);
    if (slot.restarts.length >= (this.options.maxRestarts ?? 5)) {
      this.options.onGiveUp(`${name} (pid ${started.pid}) exited unexpectedly (${cause}) ${slot.restarts.length + 1} times within a minute`);
      return;
    }
    slot.restarts.push(now);
    const delay = this.options.restartDelayMs ?? 1000;
    this.options.say(`${name} (pid ${started.pid}) exited unexpectedly (${cause}); restarting it in ${delay} ms`);
    setTimeout(() => void this.restart(slot), delay);
  }

  private async restart(slot: Slot): Promise<void> {
    if (this.stopping) return;
    try {
      await this.launch(slot);
      this.options.say(`${slot.member.name} restarted (pid ${slot.current!.pid})`);
    } catch (err) {
      this.options.say(`${slot.member.name} could not be restarted: ${(err as Error).message}`);
      const failed: Started = { pid: -1, exited: Promise.resolve({ code: -1, signal: null }), stop: async () => {} };
      slot.current = failed;
      this.onExit(slot, failed, { code: -1, signal: null });
    }
  }
}
