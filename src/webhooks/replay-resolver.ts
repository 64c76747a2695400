import { Arg, Ctx, ID, Mutation, Resolver } from "type-graphql";
import { accountOf, type GraphQLContext } from "../graphql/context.js";
import { insertReplay } from "../jobs/control.js";
import { JobType } from "../jobs/types.js";
import { webhookServices } from "./services.js";

/** replayJob: a new run of the same payload, started like a webhook's (the dispatcher starts it after the commit). */
@Resolver(() => JobType)
export class ReplayResolver {
  @Mutation(() => JobType, { description: "A new job with the same payload while it is retained; its replayOf links back" })
  async replayJob(@Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<JobType> {
    const job = await insertReplay(ctx.runtime.pool, accountOf(ctx), id);
    webhookServices(ctx.runtime).dispatcher.enqueue([job.id]);
    return JobType.from(job);
  }
}
