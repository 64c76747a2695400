import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ClientPlugin } from "@temporalio/client";
import type { Config } from "../config/config.js";

/**
 * A lazy Temporal client: the API starts (and accepts webhooks) while Temporal is down; the
 * dispatcher starts workflows once it is back.
 */
export class TemporalClientHandle {
  readonly connection: Connection;
  readonly client: Client;
  private closing = false;
  /** When the last gRPC retry the SDK has scheduled will have fired. */
  private retriesDoneAt = 0;

  constructor(
    readonly config: Config["temporal"] & { address: string },
    /** E.g. OpenTelemetry's: workflow starts carry the caller's trace context in their headers. */
    plugins: ClientPlugin[] = [],
  ) {
    // The SDK's own retry interceptor, told when we close: its retries run on plain timers, and
    // one that fires after `connection.close()` throws "Channel has been shut down" from the
    // timer — an uncaught exception in a process stopping while Temporal is unreachable.
    const retry = defaultGrpcRetryOptions();
    const interceptor = makeGrpcRetryInterceptor({
      retryableDecider: (attempt, status) => !this.closing && retry.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => {
        const ms = retry.delayFunction(attempt, status);
        this.retriesDoneAt = Math.max(this.retriesDoneAt, Date.now() + ms);
        return ms;
      },
    });
    this.connection = Connection.lazy({ address: config.address, connectTimeout: 2000, interceptors: [interceptor] });
    this.client = new Client({ connection: this.connection, namespace: config.namespace, plugins });
  }

  /** Readiness probe: the frontend answers for our namespace within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<void> {
    await this.connection.withDeadline(Date.now() + timeoutMs, () =>
      this.connection.workflowService.describeNamespace({ namespace: this.config.namespace }),
    );
  }

  /** Lets already-scheduled retries fire (they then give up) before the channel closes. */
  async close(): Promise<void> {
    this.closing = true;
    const wait = this.retriesDoneAt - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait + 50));
    await this.connection.close();
  }
}
