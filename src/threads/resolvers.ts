import { Arg, Args, Ctx, Field, FieldResolver, ID, Int, ObjectType, Query, Resolver, Root } from "type-graphql";
import { AgentType } from "../agents/types.js";
import { connectionComplexity, connectionOf, pageSize, PageArgs, type Connection } from "../graphql/connection.js";
import { weighs } from "../graphql/cost.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { spentBy } from "../billing/usage.js";
import { formatUsd } from "../infra/money.js";
import { findThread, pageAgentThreads, pageMessages, type MessageRow } from "./queries.js";

@ObjectType("ThreadToolCall", { description: "A function call the model made (OpenAI tool_calls)" })
export class ThreadToolCallType {
  @Field(() => String) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "The arguments, a JSON text" }) arguments!: string;
}

@ObjectType("ThreadMessage")
export class ThreadMessageType {
  @Field(() => Int, { description: "Position in the thread, from 1" }) seq!: number;
  @Field(() => String, { description: "system, user, assistant or tool" }) role!: string;
  // A message is at most a chat request body (chat/routes.ts: 4 MB).
  @weighs(4 * 1024 * 1024)
  @Field(() => String)
  content!: string;
  @Field(() => [ThreadToolCallType], { nullable: true, description: "An assistant message's function calls" }) toolCalls?: ThreadToolCallType[] | null;
  @Field(() => String, { nullable: true, description: "A tool message: the id of the call it answers" }) toolCallId?: string | null;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType("Thread", { description: "A conversation with one agent; its messages in order" })
export class ThreadType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
  accountId!: string;
}

const ThreadMessageConnection = connectionOf("ThreadMessage", ThreadMessageType);
const ThreadConnection = connectionOf("Thread", ThreadType);
const message = ({ data, ...m }: MessageRow) =>
  Object.assign(new ThreadMessageType(), m, {
    toolCalls: data?.toolCalls?.map((c) => Object.assign(new ThreadToolCallType(), { id: c.id, name: c.name, arguments: c.arguments })) ?? null,
    toolCallId: data?.toolCallId ?? null,
  });

@Resolver(() => ThreadType)
export class ThreadResolver {
  @Query(() => ThreadType, { nullable: true, description: "A thread of the caller's account; null when unknown or foreign" })
  async thread(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ThreadType | null> {
    const accountId = accountOf(ctx);
    const row = await findThread(ctx.runtime.pool, accountId, id);
    return row ? Object.assign(new ThreadType(), row, { accountId }) : null;
  }

  @FieldResolver(() => String, { description: "USD spent on the thread's model calls, decimal string (the sum of its ledger rows)" })
  async cost(@Root() thread: ThreadType, @Ctx() ctx: GraphQLContext): Promise<string> {
    return formatUsd(await spentBy(ctx.runtime.pool, thread.accountId, "thread_id", thread.id));
  }

  @FieldResolver(() => ThreadMessageConnection, { description: "The messages in conversation order (seq ascending), a page at a time", complexity: connectionComplexity })
  async messages(@Root() thread: ThreadType, @Args(() => PageArgs) page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Connection<ThreadMessageType>> {
    const conn = await pageMessages(ctx.runtime.pool, thread.id, pageSize(page.first), page.after);
    return { ...conn, edges: conn.edges.map((e) => ({ cursor: e.cursor, node: message(e.node) })) };
  }
}

/** Adds `Agent.threads` without touching the agents module. */
@Resolver(() => AgentType)
export class AgentThreadsResolver {
  @FieldResolver(() => ThreadConnection, { description: "The agent's threads, newest first", complexity: connectionComplexity })
  async threads(@Root() agent: AgentType, @Args(() => PageArgs) page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Connection<ThreadType>> {
    const accountId = accountOf(ctx);
    const conn = await pageAgentThreads(ctx.runtime.pool, accountId, agent.id, pageSize(page.first), page.after);
    return { ...conn, edges: conn.edges.map((e) => ({ cursor: e.cursor, node: Object.assign(new ThreadType(), e.node, { accountId }) })) };
  }
}
