import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ClientPlugin, type ConnectionLike } from "@temporalio/client";
import type { Config } from "../config/config.js";

/** What starts a workflow: a client, its connection (for deadlines) and whether to ask for eager start. */
export interface WorkflowStarter {
  client: Client;
  connection: ConnectionLike;
  eager: boolean;
}

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
  /** A client on the NativeConnection of this process's worker, offered by that worker. */
  private eager: (WorkflowStarter & { taskQueue: string }) | undefined;

  constructor(
    readonly config: Config["temporal"] & { address: string },
    /** E.g. OpenTelemetry's: workflow starts carry the caller's trace context in their headers. */
    private readonly plugins: ClientPlugin[] = [],
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

  /**
   * Called by a worker running in this process (TEMPORAL_EAGER_START=auto) with its
   * NativeConnection: workflows started on its task queue from here on ask for eager start, so the
   * server hands their first workflow task back in the start's answer instead of through the task
   * queue (one dispatch wait less; docs/design/webhook-runs-performance.md). Eager start needs the client
   * to share the worker's NativeConnection, hence the second client. Where the server or the worker
   * cannot take it (no free workflow slot, eager start disabled), the SDK starts the workflow
   * normally. Returns the withdrawal, to call before that connection closes.
   */
  offerEagerStart(connection: ConnectionLike, taskQueue: string): () => void {
    if (this.config.eagerStart === "off") return () => {};
    const offer = { client: new Client({ connection, namespace: this.config.namespace, plugins: this.plugins }), connection, eager: true, taskQueue };
    this.eager = offer;
    return () => {
      if (this.eager === offer) this.eager = undefined;
    };
  }

  /** How to start a workflow on `taskQueue`: eagerly through the in-process worker's connection when one offered it. */
  starterFor(taskQueue: string): WorkflowStarter {
    const offer = this.eager;
    if (offer && offer.taskQueue === taskQueue && !this.closing) return offer;
    return { client: this.client, connection: this.connection, eager: false };
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
