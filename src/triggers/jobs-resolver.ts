import { Args, Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import { connectionComplexity, pageSize, PageArgs, type Connection } from "../graphql/connection.js";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { listJobs } from "../jobs/list.js";
import { JobConnection } from "../jobs/resolvers.js";
import { JobType } from "../jobs/types.js";
import { TriggerType } from "./types.js";

/** `Trigger.jobs`: the trigger's runs as a connection, newest first (`logs` stays for the short view). */
@Resolver(() => TriggerType)
export class TriggerJobsResolver {
  @FieldResolver(() => JobConnection, { description: "The trigger's jobs, newest first", complexity: connectionComplexity })
  async jobs(@Root() trigger: TriggerType, @Args(() => PageArgs) page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Connection<JobType>> {
    const conn = await listJobs(ctx.runtime.pool, accountOf(ctx), { triggerId: trigger.id }, pageSize(page.first), page.after);
    return { ...conn, edges: conn.edges.map((e) => ({ cursor: e.cursor, node: JobType.from(e.node) })) };
  }
}
