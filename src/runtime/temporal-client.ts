import { Client, Connection, type ClientPlugin } from "@temporalio/client";
import type { Config } from "../config/config.js";

/**
 * A lazy Temporal client: the API starts (and accepts webhooks) while Temporal is down; the
 * dispatcher starts workflows once it is back.
 */
export class TemporalClientHandle {
  readonly connection: Connection;
  readonly client: Client;

  constructor(
    readonly config: Config["temporal"] & { address: string },
    /** E.g. OpenTelemetry's: workflow starts carry the caller's trace context in their headers. */
    plugins: ClientPlugin[] = [],
  ) {
    this.connection = Connection.lazy({ address: config.address, connectTimeout: 2000 });
    this.client = new Client({ connection: this.connection, namespace: config.namespace, plugins });
  }

  /** Readiness probe: the frontend answers for our namespace within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<void> {
    await this.connection.withDeadline(Date.now() + timeoutMs, () =>
      this.connection.workflowService.describeNamespace({ namespace: this.config.namespace }),
    );
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
