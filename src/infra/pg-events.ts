import pg from "pg";
import type { Logger } from "./logger.js";

type Handler = (payload: string) => void;

/**
 * Cross-instance events over PostgreSQL LISTEN/NOTIFY (job status, key revocation). One
 * dedicated connection per process listens; it reconnects with backoff and re-LISTENs, so a
 * database restart does not silently stop delivery.
 */
export class PgEvents {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  private closed = false;
  private connecting: Promise<void> | undefined;
  private retryDelay = 250;
  private listening: Promise<void> = Promise.resolve();
  /** When the listener connection was lost; NOTIFYs sent from then until it is back are gone. */
  private lostAt: Date | undefined;
  private readonly reconnectHandlers = new Set<(since: Date) => void>();

  constructor(
    private readonly databaseUrl: string,
    private readonly pool: pg.Pool,
    private readonly log: Logger,
    private readonly applicationName?: string,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl, application_name: this.applicationName });
      client.on("notification", (msg) => {
        for (const h of this.handlers.get(msg.channel) ?? []) {
          try {
            h(msg.payload ?? "");
          } catch (err) {
            this.log.error({ err, channel: msg.channel }, "event handler failed");
          }
        }
      });
      client.on("error", (err) => {
        this.log.warn({ err }, "event listener connection lost; reconnecting");
        this.reconnectSoon();
      });
      client.on("end", () => this.reconnectSoon());
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      this.client = client;
      this.retryDelay = 250;
      const since = this.lostAt;
      this.lostAt = undefined;
      if (since) for (const h of this.reconnectHandlers) h(since);
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private reconnectSoon(): void {
    if (this.closed) return;
    this.lostAt ??= new Date();
    const old = this.client;
    this.client = undefined;
    old?.removeAllListeners();
    old?.end().catch(() => {});
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, 5000);
    setTimeout(() => {
      if (!this.closed && !this.client) this.connect().catch(() => this.reconnectSoon());
    }, delay).unref();
  }

  /**
   * Registers `handler` before anything can fail, and never rejects: a LISTEN lost with its
   * connection (a database going down mid-start) is issued again by the reconnect, which LISTENs
   * every registered channel — a rejected subscribe would have left the handler out for good.
   */
  async subscribe(channel: string, handler: Handler): Promise<() => void> {
    let set = this.handlers.get(channel);
    const fresh = !set;
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    const client = this.client;
    // One statement at a time on the listener connection (pg deprecates overlapping queries).
    if (fresh && client) {
      const run = this.listening.then(() => client.query(`LISTEN ${quoteIdent(channel)}`));
      this.listening = run.then(
        () => {},
        () => {},
      );
      await run.catch((err) => this.log.warn({ err, channel }, "LISTEN failed; the listener issues it again when it reconnects"));
    }
    return () => set!.delete(handler);
  }

  /**
   * `handler(since)` runs each time the listener is back after losing its connection (a database
   * restart): whoever depends on events re-reads what changed since then.
   */
  onReconnect(handler: (since: Date) => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => this.reconnectHandlers.delete(handler);
  }

  async publish(channel: string, payload: string): Promise<void> {
    await this.pool.query("select pg_notify($1, $2)", [channel, payload]);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on("error", () => {});
      await client.end().catch(() => {});
    }
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
