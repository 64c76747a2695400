import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";

import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import { AppError } from "../errors/app-error.js";
import { findPublicAgent } from "../agents/agent-info.js";
import type { Runtime } from "../runtime/runtime.js";
import { guard } from "./call.js";
import { extendedCard } from "./extended-card.js";
import { createPushConfig, getPushConfig, listPushConfigPage, removePushConfig } from "./push-config-calls.js";
import { sendMessage } from "./send.js";
import { streamEvents, streamMessage, streamResubscribe } from "./stream.js";
import { StreamSlots } from "./stream-slots.js";
import { cancelTask, getTask, listTasks } from "./task-calls.js";

/**
 * The A2A methods as the SDK's transports call them. Each runs guarded (call.ts: a gateway error
 * reaches the route as its own status); the work is in send.ts, stream.ts, task-calls.ts and
 * push-config-calls.ts.
 */
export class GatewayA2AHandler implements A2ARequestHandler {
  private readonly streamSlots: StreamSlots;

  constructor(
    private readonly runtime: Runtime,
    /** The card as the SDK's transports read it (versions, capabilities). */
    private readonly card: () => Promise<AgentCard>,
  ) {
    this.streamSlots = new StreamSlots(runtime.config.a2aMaxStreamsPerKey);
  }

  getAgentCard(): Promise<AgentCard> {
    return this.card();
  }

  /** The key's agent's card with its models and limits (extended-card.ts); the key was checked fresh. */
  async getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    return guard(context, async (s) => {
      const agent = await findPublicAgent(this.runtime.pool, s.principal.agent.id);
      if (!agent) throw new AppError("not_found", "Agent not found");
      return extendedCard(agent, s.principal, this.runtime.config.publicBaseUrl, this.runtime.config);
    });
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    return guard(context, (s) => sendMessage(this.runtime, s, params));
  }

  sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    // A chat turn's stream ends with its turn; an automation agent's follows its job (up to an hour).
    return streamEvents(context, this.streamSlots, (s) => s.principal.automation, (s, push, signal) => streamMessage(this.runtime, s, params, push, signal));
  }

  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return streamEvents(context, this.streamSlots, () => true, (s, push, signal) => streamResubscribe(this.runtime, s, params, push, signal));
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return guard(context, (s) => getTask(this.runtime, s, params));
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return guard(context, (s) => listTasks(this.runtime, s, params));
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return guard(context, (s) => cancelTask(this.runtime, s, params));
  }

  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return guard(context, (s) => createPushConfig(this.runtime, s, params));
  }

  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return guard(context, (s) => getPushConfig(this.runtime, s, params));
  }

  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    return guard(context, (s) => listPushConfigPage(this.runtime, s, params));
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return guard(context, (s) => removePushConfig(this.runtime, s, params));
  }
}
