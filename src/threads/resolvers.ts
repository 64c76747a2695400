import { Arg, Ctx, Field, ID, ObjectType, Query, Resolver } from "type-graphql";
import { accountOf, type GraphQLContext } from "../graphql/context.js";

@ObjectType("ThreadMessage")
export class ThreadMessageType {
  @Field(() => String) role!: string;
  @Field(() => String) content!: string;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType("Thread", { description: "A conversation with one agent; its messages in order" })
export class ThreadType {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => [ThreadMessageType]) messages!: ThreadMessageType[];
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@Resolver(() => ThreadType)
export class ThreadResolver {
  @Query(() => ThreadType, { nullable: true, description: "A thread of the caller's account; null when unknown or foreign" })
  async thread(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ThreadType | null> {
    const pool = ctx.runtime.pool;
    const { rows } = await pool.query<{ id: string; agentId: string; createdAt: Date; updatedAt: Date }>(
      `select id, agent_id as "agentId", created_at as "createdAt", updated_at as "updatedAt" from threads where id = $1 and account_id = $2`,
      [id, accountOf(ctx)],
    );
    if (!rows[0]) return null;
    const messages = await pool.query<ThreadMessageType>(`select role, content, created_at as "createdAt" from messages where thread_id = $1 order by seq`, [id]);
    return Object.assign(new ThreadType(), rows[0], { messages: messages.rows.map((m) => Object.assign(new ThreadMessageType(), m)) });
  }
}
