import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema, type PubSub } from "type-graphql";
import { AccountResolver } from "../accounts/resolvers.js";
import { AgentResolver } from "../agents/resolvers.js";
import { AgentAutomationResolver } from "../agents/automation-resolvers.js";
import { AgentProtocolUrlsResolver } from "../agents/protocol-urls-resolver.js";
import { AgentApiKeysResolver, ApiKeyResolver } from "../keys/resolvers.js";
import { AgentThreadsResolver, ThreadResolver } from "../threads/resolvers.js";
import { AgentTriggersResolver, JobResolver, TriggerResolver } from "../triggers/resolvers.js";
import { JobListResolver } from "../jobs/resolvers.js";
import { InputRequestResolver } from "../input-requests/resolvers.js";
import { RetentionResolver } from "../jobs/retention-resolvers.js";
import { BillingResolver } from "../billing/resolvers.js";
import { TriggerJobsResolver } from "../triggers/jobs-resolver.js";
import { JobDeliveriesResolver, TriggerCallbackResolver } from "../triggers/callback-resolvers.js";
import { TestWebhookResolver } from "../webhooks/resolvers.js";
import { ReplayResolver } from "../webhooks/replay-resolver.js";
import { AgentSchedulesResolver, ScheduleResolver } from "../agent-jobs/schedule-resolvers.js";
import { createPubSub } from "@graphql-yoga/subscription";

/** Every capability's resolvers; a capability adds its resolver classes here. */
export const resolvers = [AccountResolver, AgentResolver, AgentAutomationResolver, AgentProtocolUrlsResolver, ApiKeyResolver, AgentApiKeysResolver, ThreadResolver, AgentThreadsResolver, TriggerResolver, AgentTriggersResolver, JobResolver, JobListResolver, TriggerJobsResolver, BillingResolver, TestWebhookResolver, ReplayResolver, ScheduleResolver, AgentSchedulesResolver, TriggerCallbackResolver, JobDeliveriesResolver, InputRequestResolver, RetentionResolver] as const;

export async function buildGraphQLSchema(pubSub?: PubSub): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [...resolvers] as unknown as [Function, ...Function[]],
    validate: false,
    // type-graphql insists on a pubSub once any subscription exists; ours bring their own `subscribe`.
    pubSub: pubSub ?? createPubSub(),
  });
}

/** The committed `schema.graphql` text: sorted, so the diff only shows real changes. */
export function printSchemaFile(schema: GraphQLSchema): string {
  return `# Generated from the type-graphql resolvers by \`npm run schema:write\`. Do not edit.\n\n${printSchema(lexicographicSortSchema(schema))}\n`;
}
